"""Sessions survive the daemon: clean restarts and `kill -9` at scripted points."""

from __future__ import annotations

import os
import random
import sqlite3
import time
from pathlib import Path

import pytest

from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import client, run_harness, start_daemon, wait_for_event
from tests.support.restarts import assert_no_dangling, new_session, restart


def db_path(sandbox: Sandbox) -> Path:
    return sandbox.root / "state" / "coding-harness" / "sessions.db"


wait_for = wait_for_event


def test_sessions_history_and_usage_survive_a_restart(
    sandbox: Sandbox, model: FakeModelServer, calc_project: Path
) -> None:
    model.add(
        Reply(tool_calls=[tool_call("read_file", path="calc.py")], prompt_tokens=10),
        Reply(content="It subtracts.", prompt_tokens=20, completion_tokens=5),
    )
    daemon = start_daemon(sandbox.socket, sandbox.env)
    try:
        with client(sandbox.socket) as conn:
            session = new_session(conn, calc_project)
            conn.request("session.submit", {"session": session, "text": "what does add do?"})
            wait_for(conn, "turn.finished")
            before = conn.request("session.history", {"session": session})["messages"]
            last_seq = conn.request("session.attach", {"session": session})["last_seq"]
        daemon = restart(sandbox, daemon, hard=False)
        with client(sandbox.socket) as conn:
            listed = {s["session"]: s for s in conn.request("session.list")["sessions"]}
            assert listed[session]["usage"] == {
                "prompt_tokens": 30,
                "cached_tokens": 0,
                "completion_tokens": 25,
            }
            assert conn.request("session.history", {"session": session})["messages"] == before
            replay = conn.request("session.attach", {"session": session, "since_seq": 0})
            assert replay["last_seq"] == last_seq
            model.add(Reply(content="Still here."))
            turn = conn.request("session.submit", {"session": session, "text": "and now?"})["turn"]
            finished = wait_for(conn, "turn.finished")
            while finished["data"]["turn"] != turn:  # skip the replayed one
                finished = wait_for(conn, "turn.finished")
            assert finished["seq"] > last_seq and finished["data"]["reply"] == "Still here."
        sent = model.requests[-1]["messages"]
        assert [m["content"] for m in sent if m["role"] == "user"] == [
            "what does add do?",
            "and now?",
        ]
    finally:
        daemon.terminate()
        daemon.wait(timeout=10)


CRASH_POINTS = ["streaming", "running_command", "pending_approval", "after_write"]
# CI runs each point twice; CRASH_ROUNDS=50 make test runs the long version.
ROUNDS = int(os.environ.get("CRASH_ROUNDS", "2"))


@pytest.mark.parametrize("point", CRASH_POINTS * ROUNDS)
def test_kill_9_loses_no_completed_step_and_leaves_no_dangling_call(
    sandbox: Sandbox, model: FakeModelServer, calc_project: Path, point: str
) -> None:
    (calc_project / "Makefile").write_text("check:\n\tsleep 30\n")
    edit = Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)])
    script = {
        "streaming": [
            Reply(tool_calls=[tool_call("read_file", path="calc.py")]),
            Reply(content="x", delay=30),
        ],
        "running_command": [Reply(tool_calls=[tool_call("run_shell", command="make check")])],
        "pending_approval": [edit],
        "after_write": [edit],
    }[point]
    model.add(*script)
    daemon = start_daemon(sandbox.socket, sandbox.env)
    try:
        with client(sandbox.socket) as conn:
            session = new_session(conn, calc_project)
            options = {"yes": point == "after_write"}
            conn.request("session.submit", {"session": session, "text": "go", "options": options})
            wait_for(
                conn,
                {
                    "streaming": "tool.result",
                    "running_command": "tool.call",
                    "pending_approval": "approval.requested",
                    "after_write": "diff",
                }[point],
            )
            if point == "streaming":  # kill only once the slow answer is being awaited
                deadline = time.monotonic() + 10
                while len(model.requests) < 2 and time.monotonic() < deadline:
                    time.sleep(0.01)
            if point == "after_write":
                deadline = time.monotonic() + 10
                while (
                    calc_project / "calc.py"
                ).read_text() != FIXED and time.monotonic() < deadline:
                    time.sleep(0.02)
            time.sleep(random.uniform(0.0, 0.4))  # kill somewhere inside the step
        daemon = restart(sandbox, daemon, hard=True)
        with sqlite3.connect(db_path(sandbox)) as db:
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        with client(sandbox.socket) as conn:
            history = conn.request("session.history", {"session": session})["messages"]
            assert history[0] == {"role": "user", "content": "go"}
            assert_no_dangling(history)
            tool_texts = [str(m["content"]) for m in history if m["role"] == "tool"]
            if point == "streaming":
                # The read finished; the answer being streamed was never stored.
                assert history[-1]["role"] == "tool" and BUGGY in tool_texts[-1]
            else:
                assert "interrupted" in tool_texts[-1]
            if point == "after_write":  # the write finished: the note says so
                assert "'calc.py' had been written" in tool_texts[-1]
            conn.request("session.attach", {"session": session, "since_seq": 0})
            assert wait_for(conn, "turn.finished", timeout=5)["data"]["interrupted"] is True
            if point == "pending_approval":
                assert (calc_project / "calc.py").read_text() == BUGGY  # never applied on restart
            model.add(Reply(content="continuing"))
            conn.request("session.submit", {"session": session, "text": "carry on"})
            assert wait_for(conn, "turn.finished")["data"]["exit_code"] == 0
        assert_no_dangling(model.requests[-1]["messages"][1:])
    finally:
        daemon.kill()
        daemon.wait(timeout=10)


def test_corrupt_store_is_moved_aside(sandbox: Sandbox) -> None:
    path = db_path(sandbox)
    path.parent.mkdir(parents=True, mode=0o700)
    path.write_bytes(b"this is not a database" * 500)
    daemon = start_daemon(sandbox.socket, sandbox.env)
    try:
        first = run_harness(["sessions"], env=sandbox.env, cwd=sandbox.workspace)
        with client(sandbox.socket) as conn:
            assert conn.request("session.list") == {"sessions": []}
            assert conn.server_info["notice"] is None  # told once, to the first client
        assert "no sessions" in first.stdout
        assert "session store was damaged and moved to" in first.stderr
        assert list(path.parent.glob("sessions.db.corrupt-*"))
        assert oct(path.stat().st_mode & 0o777) == "0o600"
    finally:
        daemon.terminate()
        daemon.wait(timeout=10)
