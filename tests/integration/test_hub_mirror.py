"""Every session of a runner reaches the hub: its rows as the local store holds them.

Machine A runs turns; `harness sessions --hub` on machine B lists them; the
hub's events, turns, approvals and usage rows are the local store's (read
from A's SQLite file). A daemon without a hub writes nothing anywhere.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

from coding_harness.protocol import paths
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.hub_machines import Machine, Machines
from tests.support.postgres import PostgresServer
from tests.support.processes import daemon_pid, events_until_finished, run_harness, wait_for_event
from tests.support.waiting import wait_for


def local_rows(machine: Machine, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    """Rows of the machine's own store (its SQLite file), read while it runs."""
    path = paths.state_dir(machine.env) / "sessions.db"
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return [tuple(r) for r in db.execute(sql, args).fetchall()]


def hub_rows(postgres: PostgresServer, hub_url: str, sql: str) -> list[list[str]]:
    out = postgres.psql(sql, hub_url).strip()
    return [line.split("|") for line in out.splitlines()] if out else []


def hub_seqs(postgres: PostgresServer, hub_url: str, session: str) -> list[int]:
    rows = hub_rows(
        postgres, hub_url, f"SELECT seq FROM events WHERE session_id = '{session}' ORDER BY seq"
    )
    return [int(r[0]) for r in rows]


def local_seqs(machine: Machine, session: str) -> list[int]:
    rows = local_rows(machine, "SELECT seq FROM events WHERE session_id = ? ORDER BY seq", session)
    return [int(r[0]) for r in rows]


def joined(machine: Machine) -> bool:
    with machine.client() as conn:
        return bool((conn.request("daemon.status", {})["hub"] or {}).get("joined"))


def start_on_hub(team: Machines, name: str, endpoint: str, hub_url: str) -> Machine:
    machine = team.make(name)
    machine.configure(endpoint, hub_url)
    machine.start()
    wait_for(lambda: joined(machine), f"{name} joining the hub")
    return machine


def test_a_session_on_one_machine_shows_on_another_with_its_rows(
    team: Machines, postgres: PostgresServer, hub_url: str
) -> None:
    with FakeModelServer() as model:
        laptop = start_on_hub(team, "laptop", model.endpoint, hub_url)
        desk = start_on_hub(team, "desk", model.endpoint, hub_url)
        (laptop.workspace / "notes.txt").write_text("old\n")
        model.add(
            Reply(tool_calls=[tool_call("write_file", path="notes.txt", content="new\n")]),
            Reply(content="Rewrote the notes."),
        )
        with laptop.client("laptop-terminal") as conn:
            session = conn.request("session.create", {"cwd": str(laptop.workspace)})["session"]
            conn.request("session.attach", {"session": session})
            conn.request("session.submit", {"session": session, "text": "rewrite the notes"})
            asked = wait_for_event(conn, "approval.requested")
            conn.request(
                "approval.respond",
                {"session": session, "request": asked["data"]["request"], "decision": "yes"},
            )
            events = events_until_finished(conn)
        assert events[-1]["data"]["exit_code"] == 0
        last = events[-1]["seq"]

        # The events reach the store, then the hub; the state goes back to idle there too.
        wait_for(lambda: local_seqs(laptop, session)[-1:] == [last], "the local store")
        wait_for(
            lambda: hub_seqs(postgres, hub_url, session) == local_seqs(laptop, session),
            "the hub's events",
        )
        wait_for(
            lambda: (
                hub_rows(
                    postgres, hub_url, f"SELECT state, title FROM sessions WHERE id = '{session}'"
                )
                == [["idle", "rewrite the notes"]]
            ),
            "the session's state and title in the hub",
        )

        listed = run_harness(["sessions", "--hub"], env=desk.env, cwd=desk.workspace)
        assert listed.returncode == 0, listed.stderr
        lines = listed.stdout.splitlines()
        assert lines[0].split()[:3] == ["MACHINE", "PERSON", "STATE"]
        row = next(line for line in lines if session.rsplit("-", 1)[-1] in line)
        assert row.split()[:3] == ["laptop", "laptop-person", "idle"]
        assert str(laptop.workspace) in row and "rewrite the notes" in row

        as_json = run_harness(["sessions", "--hub", "--json"], env=desk.env, cwd=desk.workspace)
        assert as_json.returncode == 0, as_json.stderr
        answer = json.loads(as_json.stdout)
        (mine,) = [s for s in answer["sessions"] if s["session"] == session]
        assert mine["runner"] == "laptop" and mine["last_seq"] == last
        assert mine["runner_away"] is False and mine["closed"] is False
        assert {r["name"] for r in answer["runners"]} == {"laptop", "desk"}

        _same_rows(laptop, postgres, hub_url, session)
        assert "libpq" in mapped_files(laptop)  # what a daemon without a hub never loads


def mapped_files(machine: Machine) -> str:
    pid = daemon_pid(machine.socket)
    assert pid is not None
    return Path(f"/proc/{pid}/maps").read_text()


def _same_rows(machine: Machine, postgres: PostgresServer, hub_url: str, session: str) -> None:
    where = f"WHERE session_id = '{session}'"
    local_events = local_rows(
        machine, "SELECT seq, kind, data FROM events WHERE session_id = ? ORDER BY seq", session
    )
    hub_events = hub_rows(
        postgres, hub_url, f"SELECT seq, kind, md5(data) FROM events {where} ORDER BY seq"
    )
    assert [[str(s), k, hashlib.md5(d.encode()).hexdigest()] for s, k, d in local_events] == (
        hub_events
    )
    local_turns = local_rows(
        machine, "SELECT id, text, state, exit_code FROM turns WHERE session_id = ?", session
    )
    hub_turns = hub_rows(postgres, hub_url, f"SELECT id, text, state, exit_code FROM turns {where}")
    assert [[str(v) for v in row] for row in local_turns] == hub_turns
    assert local_turns and local_turns[0][2] == "finished"
    local_approvals = local_rows(
        machine,
        "SELECT id, kind, path, decision, client FROM approvals WHERE session_id = ?",
        session,
    )
    hub_approvals = hub_rows(
        postgres,
        hub_url,
        f"SELECT id, kind, path, decision, client, answered_by FROM approvals {where}",
    )
    assert len(local_approvals) == 1
    # Who answered is the person (the approval.resolved event's answered_by), not the client.
    assert [[str(v) for v in row] + [machine.person] for row in local_approvals] == hub_approvals
    usage_sql = "SELECT turn, provider, model, prompt_tokens, completion_tokens FROM usage"
    local_usage = local_rows(machine, f"{usage_sql} WHERE session_id = ? ORDER BY at", session)
    hub_usage = hub_rows(postgres, hub_url, f"{usage_sql} {where} ORDER BY at")
    assert len(local_usage) >= 2
    assert [[str(v) for v in row] for row in local_usage] == hub_usage


def test_a_daemon_without_a_hub_says_so_and_writes_nothing(
    team: Machines, postgres: PostgresServer, hub_url: str, tmp_path: Path
) -> None:
    with FakeModelServer() as model:
        alone = team.make("alone")
        alone.configure(model.endpoint, hub_url)
        config = json.loads((alone.home / ".coding_harness.json").read_text())
        del config["hub"]
        (alone.home / ".coding_harness.json").write_text(json.dumps(config))
        alone.start()
        model.add(Reply(content="Hello."))
        done = run_harness(["-p", "say hello"], env=alone.env, cwd=alone.workspace)
        assert done.returncode == 0, done.stderr
        listed = run_harness(["sessions", "--hub"], env=alone.env, cwd=alone.workspace)
        assert listed.returncode == 5
        assert listed.stderr.strip().splitlines() == [
            "harness: no hub is configured: name your team's PostgreSQL database in the `hub`"
            " key of ~/.coding_harness.json (docs/team.md)"
        ]
        assert listed.stdout == ""
        # Nor did the daemon load PostgreSQL's client library, or psycopg.
        mapped = mapped_files(alone)
        assert "libpq" not in mapped and "psycopg" not in mapped
    # Nothing was created in the hub's database: not even the tables.
    assert hub_rows(
        postgres, hub_url, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
    ) == [["0"]]


def test_a_runner_not_seen_for_a_while_shows_away_and_a_hub_away_is_one_line(
    team: Machines, postgres: PostgresServer, hub_url: str
) -> None:
    with FakeModelServer() as model:
        laptop = start_on_hub(team, "laptop", model.endpoint, hub_url)
        desk = start_on_hub(team, "desk", model.endpoint, hub_url)
        model.add(Reply(content="Done."))
        done = run_harness(["-p", "tidy up"], env=laptop.env, cwd=laptop.workspace)
        assert done.returncode == 0, done.stderr
        wait_for(
            lambda: hub_rows(postgres, hub_url, "SELECT title FROM sessions") == [["tidy up"]],
            "the laptop's session in the hub",
        )
        laptop.stop()  # its row is no longer renewed; a minute passes
        postgres.psql("UPDATE runners SET seen_at = seen_at - 60 WHERE name = 'laptop'", hub_url)
        listed = run_harness(["sessions", "--hub"], env=desk.env, cwd=desk.workspace)
        assert listed.returncode == 0, listed.stderr
        (row,) = [line for line in listed.stdout.splitlines() if "tidy up" in line]
        assert row.split()[:3] == ["laptop", "laptop-person", "away"]

        postgres.stop()
        try:
            away = run_harness(["sessions", "--hub"], env=desk.env, cwd=desk.workspace)
        finally:
            postgres.start()
        assert away.returncode == 4
        (line,) = away.stderr.strip().splitlines()
        assert line.startswith("harness: hub team-test (database ")
        assert "is not reachable now" in line or "is not answering" in line
