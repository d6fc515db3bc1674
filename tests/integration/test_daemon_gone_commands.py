"""After a crash every command that needs the daemon starts it; `daemon status` only
reports, and says how to start it (issue 26 item 3). `-p ""` is an empty prompt,
never the REPL (item 4)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.integration.conftest import Sandbox
from tests.support.processes import accepts, client, run_harness
from tests.support.restarts import new_session


def crashed_with_a_session(sandbox: Sandbox, daemon: Any, cwd: Path) -> str:
    with client(sandbox.socket) as conn:
        session = new_session(conn, cwd)
    daemon.kill()
    daemon.wait(timeout=10)
    assert sandbox.socket.exists()  # a stale socket: nothing listens on it
    return session


def test_status_after_a_crash_names_the_fix_and_starts_nothing(
    sandbox: Sandbox, daemon: Any
) -> None:
    crashed_with_a_session(sandbox, daemon, sandbox.workspace)
    result = run_harness(["daemon", "status"], env=sandbox.env, cwd=sandbox.workspace)
    assert result.returncode == 4
    assert "harnessd is not running" in result.stdout
    assert "start it with `harness daemon start`" in result.stdout
    assert not accepts(sandbox.socket)


def test_sessions_after_a_crash_starts_the_daemon(sandbox: Sandbox, daemon: Any) -> None:
    session = crashed_with_a_session(sandbox, daemon, sandbox.workspace)
    result = run_harness(["sessions"], env=sandbox.env, cwd=sandbox.workspace)
    assert result.returncode == 0, result.stderr
    assert session in result.stdout  # restored by the daemon it started


def test_attach_after_a_crash_starts_the_daemon_and_joins_the_latest_session(
    sandbox: Sandbox, daemon: Any
) -> None:
    session = crashed_with_a_session(sandbox, daemon, sandbox.workspace)
    result = run_harness(["attach"], env=sandbox.env, cwd=sandbox.workspace, input="/quit\n")
    assert result.returncode == 0, result.stderr
    assert "stale socket" not in result.stderr
    with client(sandbox.socket) as conn:
        [listed] = conn.request("session.list")["sessions"]
    assert listed["session"] == session


def test_an_empty_prompt_is_a_bad_argument_not_the_repl(sandbox: Sandbox) -> None:
    for args in (["-p", ""], ["-p", "  ", "-p", ""], [""]):
        result = run_harness(args, env=sandbox.env, cwd=sandbox.workspace)
        assert result.returncode == 5, (args, result.stderr)
        assert "harness: the prompt is empty" in result.stderr
        assert "Warning" not in result.stderr  # prompt_toolkit's, off a terminal
