"""Following a session of machine A from machine B through the hub (issue 30).

Real daemons on a real PostgreSQL; A's own mirror writes its rows into the hub.
The test of missed notifications writes the rows of a runner that is not there
itself (tests/support/hub_rows.py), so it can leave the notifications out.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from coding_harness.protocol import errors
from tests.support import waiting
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.hub_machines import Machine, Machines
from tests.support.hub_rows import put_events, put_session
from tests.support.processes import events_until_finished, wait_for_event
from tests.support.tmux_terminal import Terminal

BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"


@pytest.fixture
def model() -> Iterator[FakeModelServer]:
    with FakeModelServer() as server:
        yield server


def joined(machine: Machine) -> None:
    def ready() -> bool:
        with machine.client("status") as conn:
            return bool(conn.request("daemon.status", {})["hub"]["joined"])

    waiting.wait_for(ready, f"{machine.name} to join the hub", within=20)


def start(team: Machines, model: FakeModelServer, hub_url: str, name: str, **hub: Any) -> Machine:
    machine = team.make(name)
    machine.configure(model.endpoint, hub_url, **hub)
    machine.start()
    joined(machine)
    return machine


def hub_last_seq(hub_url: str, session: str) -> int:
    with psycopg.connect(hub_url, autocommit=True) as db:
        row = db.execute("SELECT max(seq) FROM events WHERE session_id = %s", (session,)).fetchone()
    return int(row[0]) if row and row[0] is not None else -1


def a_session(machine: Machine, hub_url: str) -> dict[str, Any]:
    """A session on `machine`, once its mirror has written its row to the hub."""
    with machine.client("maker") as conn:
        made: dict[str, Any] = conn.request("session.create", {"cwd": str(machine.workspace)})

    def listed() -> bool:
        with psycopg.connect(hub_url, autocommit=True) as db:
            found = db.execute("SELECT 1 FROM sessions WHERE id = %s", (made["session"],))
            return found.fetchone() is not None

    waiting.wait_for(listed, "the session's row in the hub", within=20)
    return made


def run_on(machine: Machine, session: str, task: str) -> list[dict[str, Any]]:
    with machine.client("runner") as conn:
        conn.request("session.attach", {"session": session})
        conn.request("session.submit", {"session": session, "text": task})
        return events_until_finished(conn)


def in_hub(hub_url: str, session: str, events: list[dict[str, Any]]) -> None:
    """Wait until the hub holds `events` (the mirror writes them within a moment)."""
    last = events[-1]["seq"]
    waiting.wait_for(
        lambda: hub_last_seq(hub_url, session) >= last, f"events up to {last} in the hub"
    )


def buffered_events(conn: Any, session: str) -> list[dict[str, Any]]:
    found = []
    while conn.has_buffered():
        note = conn.next_notification(timeout=0)
        if note and note.get("method") == "event" and note["params"]["session"] == session:
            found.append(note["params"])
    return found


def test_b_replays_and_follows_a_session_of_a_live_and_its_task_runs_on_a(
    team: Machines, model: FakeModelServer, hub_url: str
) -> None:
    model.add(Reply(content="first answer"), Reply(content="second answer from A"))
    a = start(team, model, hub_url, "a")
    b = start(team, model, hub_url, "b")
    made = a_session(a, hub_url)
    sid = made["session"]
    first = run_on(a, sid, "first task")
    in_hub(hub_url, sid, first)
    with b.client("harness-repl") as conn:
        short = sid.rsplit("-", 1)[-1]
        answer = conn.request("session.attach", {"session": short, "since_seq": 0})
        assert answer["session"] == sid and answer["runner"] == "a"
        assert answer["person"] == "a-person" and answer["remote"] is True
        replayed = buffered_events(conn, sid)
        assert [e["seq"] for e in replayed] == [e["seq"] for e in first]
        assert answer["replayed"] == len(first) and answer["missed"] == 0
        assert answer["last_seq"] == first[-1]["seq"]

        submitted = conn.request("session.submit", {"session": short, "text": "second task"})
        assert str(submitted["turn"]).startswith("t-")
        live = events_until_finished(conn)
    assert "second task" in str(model.requests[-1]["messages"])
    assert live[-1]["data"]["reply"] == "second answer from A"
    seqs = [e["seq"] for e in live]
    assert seqs == list(range(first[-1]["seq"] + 1, first[-1]["seq"] + 1 + len(seqs)))


def _ask_for_an_edit(model: FakeModelServer, machine: Machine) -> None:
    (machine.workspace / "calc.py").write_text(BUGGY)
    model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="Fixed it."),
    )


def test_people_answer_approvals_only_an_approver_of_the_runner_is_heard(
    team: Machines, model: FakeModelServer, hub_url: str
) -> None:
    a = start(team, model, hub_url, "a", approvers=["c-person"])
    b = start(team, model, hub_url, "b")
    c = start(team, model, hub_url, "c")
    sid = a_session(a, hub_url)["session"]
    _ask_for_an_edit(model, a)
    with a.client("a-watch") as on_a:
        on_a.request("session.attach", {"session": sid})
        on_a.request("session.submit", {"session": sid, "text": "fix calc.py"})
        question = wait_for_event(on_a, "approval.requested")
        asked = question["data"]["request"]
        in_hub(hub_url, sid, [question])  # A's mirror wrote it (within ~20 ms)
        with b.client("harness-repl") as stranger:
            attached = stranger.request("session.attach", {"session": sid})
            assert attached["waiting_for"]["request"] == asked
            assert buffered_events(stranger, sid)[0]["data"]["request"] == asked
            answer = {"session": sid, "request": asked, "decision": "yes"}
            with pytest.raises(errors.PeerRefused) as refused:
                stranger.request("approval.respond", answer)
        assert str(refused.value.message) == (
            "b-person may not answer a's approvals: add them to hub.approvers in a's global file"
        )
        with a.client("lister") as lister:
            listed = lister.request("session.list", {})["sessions"][0]
        assert listed["waiting_for"]["request"] == asked  # still waits
        with c.client("harness-repl") as approver:
            approver.request("session.attach", {"session": sid})
            result = approver.request("approval.respond", answer)
            assert result["decision"] == "yes"
            resolved = wait_for_event(approver, "approval.resolved")
        assert resolved["data"]["answered_by"] == "c-person"
        finished = wait_for_event(on_a, "turn.finished")
    assert finished["data"]["exit_code"] == 0
    assert (a.workspace / "calc.py").read_text() == FIXED


def test_a_local_answer_records_the_runners_person(
    team: Machines, model: FakeModelServer, hub_url: str
) -> None:
    a = start(team, model, hub_url, "a")
    sid = a_session(a, hub_url)["session"]
    _ask_for_an_edit(model, a)
    with a.client("harness-repl") as conn:
        conn.request("session.attach", {"session": sid})
        conn.request("session.submit", {"session": sid, "text": "fix calc.py"})
        asked = wait_for_event(conn, "approval.requested")["data"]["request"]
        conn.request("approval.respond", {"session": sid, "request": asked, "decision": "yes"})
        resolved = wait_for_event(conn, "approval.resolved")
    assert resolved["data"]["answered_by"] == "a-person"


def test_nothing_is_lost_when_notifications_are_missed(
    team: Machines, model: FakeModelServer, hub_url: str
) -> None:
    """Rows of a runner that is not here, written without a notification, and B's listener
    cut off between them: B's reader still sends every one, in order, none twice."""
    b = start(team, model, hub_url, "b")
    sid = "20261206-120000-ab12cd"
    put_session(
        hub_url, {"session": sid, "cwd": "/elsewhere"}, runner="ghost", person="ghost-person"
    )

    def events(first: int, last: int) -> list[dict[str, Any]]:
        return [
            {"seq": n, "kind": "text.delta", "data": {"text": f"piece {n}"}, "at": time.time()}
            for n in range(first, last + 1)
        ]

    with b.client("follower") as conn, psycopg.connect(hub_url, autocommit=True) as db:
        conn.request("session.attach", {"session": sid})
        put_events(db, sid, events(1, 5), quiet=True)  # rows, no notification at all
        # B's listener loses its connection while more rows are written.
        db.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE application_name = 'harnessd b'"
        )
        put_events(db, sid, events(6, 12), quiet=True)
        put_events(db, sid, events(13, 15))
        heard: list[dict[str, Any]] = []
        deadline = time.monotonic() + 20
        while len(heard) < 15 and time.monotonic() < deadline:
            note = conn.next_notification(timeout=deadline - time.monotonic())
            if note and note.get("method") == "event":
                heard.append(note["params"])
        assert conn.next_notification(timeout=0.5) is None  # none twice
    assert [e["seq"] for e in heard] == list(range(1, 16))
    assert heard[0]["data"] == {"text": "piece 1"}


def test_other_methods_on_a_remote_session_name_its_runner(
    team: Machines, model: FakeModelServer, hub_url: str
) -> None:
    a = start(team, model, hub_url, "a")
    b = start(team, model, hub_url, "b")
    sid = a_session(a, hub_url)["session"]
    with b.client() as conn:
        with pytest.raises(errors.SessionNotFound) as caught:
            conn.request("session.history", {"session": sid})
        with pytest.raises(errors.InvalidParams) as widened:
            conn.request("session.submit", {"session": sid, "text": "x", "options": {"yes": True}})
    assert (
        caught.value.message == f"session {sid} runs on runner a (person a-person); run that there"
    )
    assert "auto-approve does not reach" in widened.value.message


def at_rest(screen: str) -> bool:
    """The REPL waits at its prompt, nothing streaming under it."""
    return screen.rstrip().splitlines()[-1].strip() == ">"


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_the_repl_on_b_attaches_to_a_session_of_a_and_runs_a_line_there(
    team: Machines, model: FakeModelServer, hub_url: str
) -> None:
    model.add(
        Reply(content="an answer given on A"),
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="a line typed on B, answered on A"),
        Reply(content="another task from A itself"),
    )
    a = start(team, model, hub_url, "a", approvers=["b-person"])
    (a.workspace / "calc.py").write_text(BUGGY)
    b = start(team, model, hub_url, "b")
    sid = a_session(a, hub_url)["session"]
    in_hub(hub_url, sid, run_on(a, sid, "a first task"))
    term = Terminal(b, b.workspace, "b", "attach", sid.rsplit("-", 1)[-1])  # type: ignore[arg-type]
    try:
        term.wait_for(f"attached to session {sid} on runner a (a-person), through the hub")
        term.wait_for("an answer given on A")  # the replay
        term.type("fix it from B")
        term.wait_for("Apply this change?")  # A's question, asked on B
        term.type("y")
        term.wait_for("a line typed on B, answered on A")
        assert (a.workspace / "calc.py").read_text() == FIXED
        run_on(a, sid, "a task on A")
        term.wait_for("another task from A itself")  # the live stream
        term.wait_until(lambda: at_rest(term.text()), "the prompt, the turn over")
        term.keys("C-d")
        assert term.exit_status() == 0
    finally:
        term.close()
    assert "fix it from B" in str(model.requests[1]["messages"])


def test_a_turn_on_a_is_cancelled_from_b(
    team: Machines, model: FakeModelServer, hub_url: str
) -> None:
    model.add(Reply(content="too late", delay=30))
    a = start(team, model, hub_url, "a")
    b = start(team, model, hub_url, "b")
    sid = a_session(a, hub_url)["session"]
    with a.client("a-watch") as on_a, b.client() as on_b:
        on_a.request("session.attach", {"session": sid})
        on_a.request("session.submit", {"session": sid, "text": "take your time"})
        wait_for_event(on_a, "turn.started")
        assert on_b.request("session.cancel", {"session": sid}) == {"cancelled": True}
        finished = wait_for_event(on_a, "turn.finished")
    assert finished["data"]["exit_code"] != 0


def test_with_the_hubs_own_mirror_b_follows_and_answers_a(
    team: Machines, model: FakeModelServer, hub_url: str
) -> None:
    """End to end: A's own mirror writes its rows (no stand-in); B follows, submits, answers."""
    pytest.importorskip("coding_harness.daemon.team.mirror")
    model.add(Reply(content="first answer"))
    a = start(team, model, hub_url, "a", approvers=["b-person"])
    b = start(team, model, hub_url, "b")
    with a.client("maker") as conn:
        sid = conn.request("session.create", {"cwd": str(a.workspace)})["session"]
    first = run_on(a, sid, "first task")
    with b.client("harness-repl") as on_b:

        def attached() -> dict[str, Any] | None:
            try:
                answer = on_b.request("session.attach", {"session": sid, "since_seq": 0})
            except errors.SessionNotFound:
                return None
            return answer if answer["last_seq"] >= first[-1]["seq"] else None

        waiting.wait_for(attached, "A's session and its first turn in the hub", within=20)
        _ask_for_an_edit(model, a)
        on_b.request("session.submit", {"session": sid, "text": "fix calc.py"})
        asked = wait_for_event(on_b, "approval.requested")["data"]["request"]
        on_b.request("approval.respond", {"session": sid, "request": asked, "decision": "yes"})
        resolved = wait_for_event(on_b, "approval.resolved")
        finished = wait_for_event(on_b, "turn.finished")
    assert resolved["data"]["answered_by"] == "b-person"
    assert finished["data"]["exit_code"] == 0
    assert (a.workspace / "calc.py").read_text() == FIXED
