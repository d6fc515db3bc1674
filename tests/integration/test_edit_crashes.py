"""`kill -9` of the daemon around an approved edit: after the restart, the history says
what is on disk, the file is whole, and no temporary file is left in the workspace.

The write is journaled before and after it happens (`daemon/tools/edit/journal.py`);
recovery compares the file with the journal's hashes. The exact crash windows
are replayed deterministically in tests/unit/daemon/turns/test_interrupted.py; here real
kills land at random just after the "yes" (CRASH_ROUNDS=50 runs more rounds).
"""

from __future__ import annotations

import os
import random
import subprocess
import time
from pathlib import Path

import pytest

from coding_harness.protocol.client import Connection
from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import client, start_daemon, wait_for_event
from tests.support.restarts import assert_no_dangling, new_session, restart

ROUNDS = int(os.environ.get("CRASH_ROUNDS", "3"))
WRITTEN = "had been written: the file holds the new text"
# A file large enough that writing it takes a moment, so kills land inside the write too.
PADDING = "# padding line to make the file large enough to take a while\n" * 40_000


def temp_files(root: Path) -> list[Path]:
    return [p for p in root.rglob(".harness-*") if p.is_file()]


def approve_edit(conn: Connection, session: str) -> None:
    """Submit the scripted edit and answer its approval with yes."""
    conn.request("session.submit", {"session": session, "text": "fix add"})
    asked = wait_for_event(conn, "approval.requested")
    conn.request("approval.respond", {"request": asked["data"]["request"], "decision": "yes"})


def interrupted_result(sandbox: Sandbox, session: str) -> tuple[str, list[str]]:
    """The restarted daemon's note for the edit call, and the files its turn changed."""
    with client(sandbox.socket) as conn:
        history = conn.request("session.history", {"session": session})["messages"]
        assert_no_dangling(history)
        conn.request("session.attach", {"session": session, "since_seq": 0})
        finished = wait_for_event(conn, "turn.finished", timeout=5)["data"]
    assert finished["interrupted"] is True
    [result] = [m for m in history if m["role"] == "tool"]
    return str(result["content"]), list(finished["files_changed"])


def test_kill_9_during_make_check_reports_the_edit_as_written(
    sandbox: Sandbox, model: FakeModelServer, calc_project: Path
) -> None:
    (calc_project / "Makefile").write_text("check:\n\tsleep 30\n")
    model.add(Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]))
    daemon = start_daemon(sandbox.socket, sandbox.env)
    try:
        with client(sandbox.socket) as conn:
            session = new_session(conn, calc_project)
            approve_edit(conn, session)
            wait_for_event(conn, "edit.write", phase="done")
        daemon = restart(sandbox, daemon, hard=True)
        note, changed = interrupted_result(sandbox, session)
        assert note.startswith("interrupted: the daemon stopped")
        assert f"The edit to 'calc.py' {WRITTEN}." in note
        assert changed == ["calc.py"]
        assert (calc_project / "calc.py").read_text() == FIXED
    finally:
        daemon.kill()
        daemon.wait(timeout=10)


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_kill_9_right_after_yes_leaves_old_or_new_and_says_which(
    sandbox: Sandbox, model: FakeModelServer, calc_project: Path, round_: int
) -> None:
    old, new = PADDING + BUGGY, PADDING + FIXED
    (calc_project / "calc.py").write_text(old)
    (calc_project / "Makefile").write_text("check:\n\tsleep 30\n")
    change = tool_call("replace_text", path="calc.py", old_text=BUGGY, new_text=FIXED)
    model.add(Reply(tool_calls=[change]))
    daemon: subprocess.Popen[bytes] = start_daemon(sandbox.socket, sandbox.env)
    try:
        with client(sandbox.socket) as conn:
            session = new_session(conn, calc_project)
            approve_edit(conn, session)
            time.sleep(random.uniform(0.0, 0.03))
        daemon = restart(sandbox, daemon, hard=True)
        on_disk = (calc_project / "calc.py").read_text()
        assert on_disk in (old, new), "the file is neither the old nor the new text"
        assert temp_files(calc_project) == []
        note, changed = interrupted_result(sandbox, session)
        assert (WRITTEN in note) == (on_disk == new), note
        assert changed == (["calc.py"] if on_disk == new else [])
    finally:
        daemon.kill()
        daemon.wait(timeout=10)
