"""grep against a real daemon: a search that would run for ages leaves the daemon
answering every other client, `session.cancel` ends it (the search process too), and
the search's time limit ends it with a tool result the model reads.

The pattern (`tests/support/slow_search.py`) is catastrophic for Python's `re` on the
34 `a`s and `!` of `a.txt`, and slow for ripgrep on the a/b text beside it.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import psutil

from coding_harness.protocol.client import Connection
from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import client, run_harness, wait_for_event
from tests.support.slow_search import RUNAWAY_PATTERN, searches, write_runaway_line, write_slow_text


def slow_workspace(sandbox: Sandbox) -> Path:
    write_runaway_line(sandbox.workspace)
    write_slow_text(sandbox.workspace)
    return sandbox.workspace


def configure(sandbox: Sandbox, endpoint: str, **agent: object) -> None:
    profile = {"type": "openai", "endpoint": endpoint, "model": "fake-model"}
    config = {"default_provider": "fake", "providers": {"fake": profile}, "agent": agent}
    (sandbox.home / ".coding_harness.json").write_text(json.dumps(config))


def all_gone(processes: list[psutil.Process], within: float = 3.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not [p for p in processes if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]:
            return True
        time.sleep(0.05)
    return False


def open_session(conn: Connection, cwd: Path) -> str:
    session = conn.request("session.create", {"cwd": str(cwd)})["session"]
    conn.request("session.attach", {"session": session})
    return session


def test_a_runaway_grep_leaves_the_daemon_answering_and_cancel_stops_it(
    sandbox: Sandbox, model: FakeModelServer, daemon: subprocess.Popen[bytes]
) -> None:
    workspace = slow_workspace(sandbox)
    model.add(
        Reply(tool_calls=[tool_call("grep", pattern=RUNAWAY_PATTERN, path=".")]),
        Reply(content="never reached"),
    )
    with client(sandbox.socket) as conn, client(sandbox.socket, "bystander") as other:
        session = open_session(conn, workspace)
        conn.request("session.submit", {"session": session, "text": "find the aaa code"})
        wait_for_event(conn, "tool.call", name="grep")
        for _ in range(3):  # the search runs all the while
            time.sleep(0.3)
            status = other.request("daemon.status", timeout=1.0)
            assert status["pid"] == daemon.pid
        running = searches(daemon.pid)
        assert running, "the search should still be running"
        assert conn.request("session.cancel", {"session": session}, timeout=1.0) == {
            "cancelled": True
        }
        finished = wait_for_event(conn, "turn.finished", timeout=5)
        assert finished["data"]["exit_code"] == 130
    assert all_gone(running), "cancel must end the search process"
    assert len(model.requests) == 1


def test_a_search_past_its_time_limit_ends_with_a_tool_result(
    sandbox: Sandbox, model: FakeModelServer, daemon: subprocess.Popen[bytes]
) -> None:
    workspace = slow_workspace(sandbox)
    configure(sandbox, model.endpoint, command_timeout=2)  # grep's limit is at most this
    model.add(
        Reply(tool_calls=[tool_call("grep", pattern=RUNAWAY_PATTERN, path=".")]),
        Reply(content="The search was too slow."),
    )
    started = time.monotonic()
    result = run_harness(
        ["--output-format", "json", "-p", "find the aaa code"],
        env=sandbox.env,
        cwd=workspace,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["reply"] == "The search was too slow."
    tool_results = [m for m in model.requests[1]["messages"] if m["role"] == "tool"]
    assert "search timed out after 2 s" in tool_results[0]["content"]
    assert time.monotonic() - started < 15
    assert not searches(daemon.pid)
