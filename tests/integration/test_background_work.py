"""Background and parallel work through the real `harness` command and daemon:
`--bg` tasks fired from several shells at once, `harness wait`'s exit codes,
`harness logs [-f]`, `harness sessions --json` states, the notifications of a
background turn's end, and `max_parallel` (the fake server counts the requests it
has at once)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import client, run_harness, start_harness
from tests.support.repl_run import ReplRun
from tests.support.routed_model import Held, RoutedModelServer
from tests.support.waiting import wait_for

WRONG = "def add(a, b):\n    return a * b\n"


@pytest.fixture
def routed(sandbox: Sandbox) -> Iterator[RoutedModelServer]:
    server = RoutedModelServer().start()
    sandbox.write_config(server.endpoint, notes=False)
    try:
        yield server
    finally:
        server.stop()


def _configure(sandbox: Sandbox, **sections: Any) -> None:
    path = sandbox.home / ".coding_harness.json"
    config = json.loads(path.read_text())
    for key, value in sections.items():
        if key == "profile":
            config["providers"]["fake"].update(value)
        else:
            config[key] = value
    path.write_text(json.dumps(config))


def _project(sandbox: Sandbox, name: str) -> Path:
    folder = sandbox.root / name
    folder.mkdir()
    (folder / "calc.py").write_text(BUGGY)
    (folder / "Makefile").write_text(
        f"check:\n\t{sys.executable} -c 'import calc; assert calc.add(2, 3) == 5, \"wrong\"'\n"
    )
    return folder


def _fire(sandbox: Sandbox, folder: Path, *args: str) -> subprocess.Popen[str]:
    """`harness ARGS` started in `folder`, as from a shell of its own."""
    return start_harness(list(args), env=sandbox.env, cwd=folder)


def _harness(
    sandbox: Sandbox, *args: str, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    return run_harness(list(args), env=sandbox.env, cwd=sandbox.root, input=input)


def _rows(sandbox: Sandbox) -> dict[str, dict[str, Any]]:
    """`harness sessions --json`, by short id."""
    listed = _harness(sandbox, "sessions", "--json")
    assert listed.returncode == 0, listed.stderr
    return {row["short_id"]: row for row in json.loads(listed.stdout)["sessions"]}


def _states(sandbox: Sandbox) -> dict[str, str]:
    with client(sandbox.socket, "look", approvals=False) as conn:
        rows = conn.request("session.list")["sessions"]
    return {row["short_id"]: row["state"] for row in rows}


def _started(process: subprocess.Popen[str]) -> str:
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert "harness logs" in err and "harness wait" in err  # how to follow it
    return out.strip()


def test_three_background_tasks_from_three_shells(
    sandbox: Sandbox, daemon: subprocess.Popen[bytes], routed: RoutedModelServer
) -> None:
    notes = sandbox.root / "notified"
    notes.mkdir()
    _configure(
        sandbox,
        notify={"desktop": "off", "after_seconds": 600, "command": f"cat > {notes}/$$.json"},
    )
    asking, failing, plain = (_project(sandbox, n) for n in ("asking", "failing", "plain"))
    routed.route(
        "task-asking",
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="Fixed it."),
    )
    routed.route(
        "task-failing",
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=WRONG)]),
        Reply(content="The check still fails."),
    )
    routed.route("task-plain", Reply(content="Nothing to change."))
    shells = [
        _fire(sandbox, asking, "-p", "task-asking: fix calc.py", "--bg"),
        _fire(sandbox, failing, "-y", "-p", "task-failing: fix calc.py", "--bg"),
        _fire(sandbox, plain, "-p", "task-plain: look at calc.py", "--bg"),
    ]
    ask_id, fail_id, plain_id = (_started(shell) for shell in shells)

    assert _harness(sandbox, "wait", plain_id).returncode == 0
    assert _harness(sandbox, "wait", fail_id).returncode == 2  # make check failed
    wait_for(lambda: _states(sandbox).get(ask_id) == "waiting", "the approval to wait")
    rows = _rows(sandbox)
    assert rows[ask_id]["waiting_for"]["path"] == "calc.py"
    assert rows[fail_id]["state"] == "failed" and rows[fail_id]["last_turn"]["exit_code"] == 2
    assert rows[plain_id]["state"] == "idle" and rows[plain_id]["last_turn"]["exit_code"] == 0
    assert rows[plain_id]["title"] == "task-plain: look at calc.py"
    table = _harness(sandbox, "sessions").stdout  # the pipe's lines say the states too
    assert any(
        line.startswith(rows[ask_id]["session"]) and " waiting " in line
        for line in table.splitlines()
    )

    joining = _fire(sandbox, sandbox.root, "wait", ask_id, fail_id)
    following = _fire(sandbox, sandbox.root, "logs", ask_id, "-f", "--plain")
    approved = _harness(sandbox, "approve", ask_id, input="y\n")
    assert approved.returncode == 0, approved.stderr
    out, err = following.communicate(timeout=60)
    assert following.returncode == 0, err
    assert "Fixed it." in out and "calc.py" in err  # the diff and tool lines, as a one-shot
    joining.communicate(timeout=60)
    assert joining.returncode == 2  # the first failure among those waited for
    assert (asking / "calc.py").read_text() == FIXED
    assert _harness(sandbox, "wait", ask_id).returncode == 0

    replayed = _harness(sandbox, "logs", plain_id)
    assert replayed.returncode == 0 and replayed.stdout.strip() == "Nothing to change."
    failed_log = _harness(sandbox, "logs", fail_id, "--plain")
    assert "failed (exit" in failed_log.stderr and "The check still fails." in failed_log.stdout

    wait_for(lambda: len(list(notes.glob("*.json"))) == 3, "a notification per turn")
    sent = [json.loads(path.read_text()) for path in notes.glob("*.json")]
    ended = {item["title"].split(":")[0]: item for item in sent}
    assert {item["event"] for item in sent} == {"turn.finished"}
    assert {k: v["exit_code"] for k, v in ended.items()} == {
        "task-asking": 0,
        "task-failing": 2,
        "task-plain": 0,
    }
    assert ended["task-failing"]["state"] == "failed"
    assert ended["task-plain"]["logs"].startswith("harness logs ")


def test_wait_and_logs_say_what_they_cannot_do(
    sandbox: Sandbox, daemon: subprocess.Popen[bytes], routed: RoutedModelServer
) -> None:
    assert _harness(sandbox, "wait", "nosuch").returncode == 5
    assert "no session 'nosuch'" in _harness(sandbox, "logs", "nosuch").stderr
    refused = run_harness(["--bg", "-p", ""], env=sandbox.env, cwd=sandbox.workspace)
    assert refused.returncode == 5 and "the prompt is empty" in refused.stderr


def _three_held(sandbox: Sandbox, routed: RoutedModelServer) -> tuple[list[str], list[Held]]:
    held = [Held(Reply(content=f"answer {n}")) for n in range(3)]
    ids = []
    for n, answer in enumerate(held):
        routed.route(f"task-{n}", answer)
        folder = _project(sandbox, f"p{n}")
        ids.append(_started(_fire(sandbox, folder, "-p", f"task-{n}", "--bg")))
    return ids, held


def test_a_local_model_gets_one_request_at_a_time_and_the_queue_shows(
    sandbox: Sandbox, daemon: subprocess.Popen[bytes], routed: RoutedModelServer
) -> None:
    ids, held = _three_held(sandbox, routed)  # loopback: max_parallel is 1 by default
    wait_for(
        lambda: sorted(_states(sandbox).values()) == ["queued", "queued", "running"], "a queue"
    )
    rows = _rows(sandbox)
    queued = sorted(
        row["model_queue"]["ahead"] for row in rows.values() if row["state"] == "queued"
    )
    assert queued == [1, 2] and routed.in_flight == 1
    for answer in held:
        answer.go.set()
    assert _harness(sandbox, "wait", *ids).returncode == 0
    assert routed.most_at_once == 1


def test_sessions_of_different_folders_run_side_by_side(
    sandbox: Sandbox, daemon: subprocess.Popen[bytes], routed: RoutedModelServer
) -> None:
    _configure(sandbox, profile={"max_parallel": 0})  # no limit
    ids, held = _three_held(sandbox, routed)
    wait_for(lambda: routed.in_flight == 3, "three requests in flight at once")
    assert set(_states(sandbox).values()) == {"running"}
    for answer in held:
        answer.go.set()
    assert _harness(sandbox, "wait", *ids).returncode == 0
    assert routed.most_at_once == 3
    replies = {_harness(sandbox, "logs", sid).stdout.strip() for sid in ids}
    assert replies == {"answer 0", "answer 1", "answer 2"}


def test_a_repl_line_ending_in_an_ampersand_runs_in_a_session_of_its_own(
    sandbox: Sandbox, model: FakeModelServer, repl: Callable[..., ReplRun]
) -> None:
    model.add(Reply(content="Looked in the background."))
    run = repl()
    run.type("look at calc.py &\n")
    run.wait_for("running in the background as session", "err")
    short = re.search(r"as session (\w+)", run.err.text())
    assert short is not None
    assert _harness(sandbox, "wait", short[1]).returncode == 0
    assert _harness(sandbox, "logs", short[1]).stdout.strip() == "Looked in the background."
    assert run.finish() == 0
    rows = _rows(sandbox)
    assert rows[short[1]]["title"] == "look at calc.py"  # the task, without its `&`
    assert len(rows) == 2  # the REPL's own session stayed apart, its history empty
    assert [row["messages"] for sid, row in rows.items() if sid != short[1]] == [0]
