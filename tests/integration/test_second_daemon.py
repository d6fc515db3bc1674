"""A second `harnessd` must never touch the live daemon's store (issue 10, item 6).

Started while a turn waits for an approval, the second daemon used to run crash
recovery before it found the socket taken: the live turn was marked interrupted,
its approval expired, and a synthetic `turn.finished` took a seq. Now nothing
opens the store before both instance locks (socket and state folder) are held.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import client, wait_for_event


def _store_rows(state: Path) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    db = sqlite3.connect(f"file:{state / 'coding-harness' / 'sessions.db'}?mode=ro", uri=True)
    try:
        turns = db.execute("SELECT id, state, exit_code FROM turns ORDER BY id").fetchall()
        events = db.execute("SELECT seq, kind FROM events ORDER BY seq").fetchall()
    finally:
        db.close()
    return turns, events


def _second_daemon(sandbox: Sandbox, socket: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "coding_harness.daemon", "--socket", str(socket)],
        env=sandbox.env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_second_daemon_leaves_a_waiting_turn_alone(
    sandbox: Sandbox, model: FakeModelServer, daemon, calc_project
) -> None:
    model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="done"),
    )
    with client(sandbox.socket, "first") as first:
        session = first.request("session.create", {"cwd": str(calc_project)})["session"]
        first.request("session.attach", {"session": session})
        first.request("session.submit", {"session": session, "text": "fix it"})
        asked = wait_for_event(first, "approval.requested")
        first.request("daemon.status", {})  # the step before the approval is flushed
        before = _store_rows(sandbox.root / "state")

        same_socket = _second_daemon(sandbox, sandbox.socket)
        other_socket = _second_daemon(sandbox, sandbox.root / "run" / "other.sock")

        assert same_socket.returncode == 1, same_socket.stderr
        assert "already running" in same_socket.stderr
        assert other_socket.returncode == 1, other_socket.stderr
        assert "using the state folder" in other_socket.stderr
        assert "Traceback" not in same_socket.stderr + other_socket.stderr
        assert _store_rows(sandbox.root / "state") == before

        first.request("approval.respond", {"request": asked["data"]["request"], "decision": "yes"})
        resolved = wait_for_event(first, "approval.resolved")
        finished = wait_for_event(first, "turn.finished")
    assert resolved["seq"] == asked["seq"] + 1
    assert finished["data"]["exit_code"] == 0
    assert (calc_project / "calc.py").read_text() == FIXED
    assert not (sandbox.root / "run" / "other.sock").exists()
