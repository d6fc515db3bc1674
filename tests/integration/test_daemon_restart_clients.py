"""Every client carries on after the daemon restarts (SIGTERM, and a new daemon) or
dies (SIGKILL, and nothing else starts one): it reconnects all its connections,
starting the daemon when it is gone, and the next thing typed is sent once, on
the new connection (issue 26 item 1). The REPL on a thread of the test and under
tmux (`harness attach`), the one-shot, `harness approve` and `harness acp`.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support import waiting
from tests.support.acp_editor import Editor, open_editor, text_prompt
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import (
    client,
    daemon_pid,
    events_until_finished,
    run_harness,
    start_daemon,
    wait_for_event,
)
from tests.support.repl_run import ReplRun
from tests.support.restarts import new_session
from tests.support.tmux_terminal import Terminal

HOW = ["restart", "kill"]
StopDaemon = Callable[[str], None]


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.fixture
def stop_daemon_now(sandbox: Sandbox) -> Iterator[StopDaemon]:
    """`stop("restart")`: SIGTERM, then a new daemon, as `harness daemon restart` does;
    `stop("kill")`: SIGKILL, and no new daemon (the client has to start one)."""
    started: list[subprocess.Popen[bytes]] = []

    def stop(how: str) -> None:
        pid = daemon_pid(sandbox.socket)
        assert pid is not None
        os.kill(pid, signal.SIGTERM if how == "restart" else signal.SIGKILL)
        waiting.wait_for(lambda: _gone(pid), f"daemon {pid} to end")
        if how == "restart":
            started.append(start_daemon(sandbox.socket, sandbox.env))

    yield stop
    for process in started:
        process.terminate()
        process.wait(timeout=15)


def said_once(model: FakeModelServer, text: str) -> bool:
    """Whether exactly one model request was for the task `text` (a task sent twice
    would be two turns, each with its own request)."""
    last = []
    for request in model.requests:
        users = [m["content"] for m in request["messages"] if m["role"] == "user"]
        last.extend(users[-1:])
    return sum(text in str(content) for content in last) == 1


@pytest.mark.parametrize("how", HOW)
def test_the_repl_carries_on_after_the_daemon_restarts_or_dies(
    model: FakeModelServer, repl: Callable[..., ReplRun], stop_daemon_now: StopDaemon, how: str
) -> None:
    model.add(Reply(content="First answer."), Reply(content="Second answer."))
    run = repl()
    run.type("say one\n")
    run.wait_for("First answer.")
    stop_daemon_now(how)
    run.wait_for("reconnected", "err", timeout=30)  # the events: the daemon is back
    run.type("say two\n")
    run.wait_for("Second answer.", timeout=30)
    assert run.finish() == 0, run.err.text()[-2000:]
    assert "Broken pipe" not in run.err.text()
    assert said_once(model, "say two")


@pytest.mark.parametrize("how", HOW)
def test_attach_under_tmux_carries_on_after_the_daemon_restarts_or_dies(
    sandbox: Sandbox,
    model: FakeModelServer,
    daemon: Any,
    calc_project: Path,
    stop_daemon_now: StopDaemon,
    how: str,
) -> None:
    model.add(Reply(content="Back again."))
    with client(sandbox.socket) as conn:
        session = new_session(conn, calc_project)
    term = Terminal(sandbox, calc_project, "attach", "attach", session)
    try:
        term.wait_for(">")
        stop_daemon_now(how)
        term.wait_for("reconnected")
        term.type("are you there")
        term.wait_for("Back again.")
        term.type("/quit")
        assert term.exit_status() == 0, term.text()
    finally:
        term.close()
    assert said_once(model, "are you there")


@pytest.mark.parametrize("how", HOW)
def test_a_oneshot_mid_turn_ends_with_the_turn_and_the_next_one_works(
    sandbox: Sandbox,
    model: FakeModelServer,
    daemon: Any,
    calc_project: Path,
    stop_daemon_now: StopDaemon,
    how: str,
) -> None:
    model.add(Reply(content="Never arrives.", delay=30), Reply(content="Done."))
    err = sandbox.root / "oneshot.stderr"
    with err.open("w") as err_file:
        process = subprocess.Popen(
            [sys.executable, "-m", "coding_harness.client", "-p", "the slow one"],
            env=sandbox.env,
            cwd=calc_project,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err_file,
            text=True,
        )
    try:
        waiting.wait_for(lambda: model.requests, "the model request")
        stop_daemon_now(how)
        out, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    said = err.read_text()
    assert process.returncode not in (0, 4), said  # the turn's own end: cancelled, interrupted
    assert "Never arrives." not in out and "Traceback" not in said
    again = run_harness(["-p", "and now"], env=sandbox.env, cwd=calc_project, timeout=60)
    assert again.returncode == 0, again.stderr
    assert "Done." in again.stdout


@pytest.mark.parametrize("how", HOW)
def test_approve_answers_a_request_made_after_the_daemon_restarts_or_dies(
    sandbox: Sandbox,
    model: FakeModelServer,
    daemon: Any,
    calc_project: Path,
    stop_daemon_now: StopDaemon,
    how: str,
) -> None:
    model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="Fixed."),
    )
    err = sandbox.root / "approve.stderr"
    with err.open("w") as err_file:
        approver = subprocess.Popen(
            [sys.executable, "-m", "coding_harness.client", "approve"],
            env=sandbox.env,
            cwd=calc_project,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=err_file,
            text=True,
        )
    assert approver.stdin is not None
    try:
        waiting.wait_for(lambda: "answering approvals" in err.read_text(), "approve to start")
        stop_daemon_now(how)
        waiting.wait_for(lambda: "reconnected" in err.read_text(), "approve to reconnect")
        with client(sandbox.socket, approvals=False) as conn:
            session = new_session(conn, calc_project)
            conn.request("session.submit", {"session": session, "text": "fix calc"})
            waiting.wait_for(lambda: "Apply this change?" in err.read_text(), "the question")
            approver.stdin.write("y\n")
            approver.stdin.flush()
            resolved = wait_for_event(conn, "approval.resolved")
            events_until_finished(conn)
        assert resolved["data"]["decision"] == "yes"
        assert (calc_project / "calc.py").read_text() == FIXED
    finally:
        approver.stdin.close()
        approver.terminate()
        approver.wait(timeout=15)


def test_acp_relinks_after_a_restart_and_the_next_prompt_works(
    sandbox: Sandbox,
    model: FakeModelServer,
    daemon: Any,
    calc_project: Path,
    stop_daemon_now: StopDaemon,
) -> None:
    """A SIGTERM'd daemon ends the turn (cancelled) before it goes; the bridge links to
    the new daemon. (A crash is test_acp_bridge's `daemon_crash` test.)"""
    model.add(Reply(content="Never arrives.", delay=30), Reply(content="Back again."))
    editor = Editor()

    async def scenario() -> tuple[Any, Any]:
        async with open_editor(sandbox.env, calc_project, editor) as conn:
            session = (await conn.new_session(cwd=str(calc_project), mcp_servers=[])).session_id
            first = asyncio.ensure_future(
                conn.prompt(session_id=session, prompt=text_prompt("fix calc.py"))
            )
            await waiting.until(lambda: model.requests, "the model request")
            await asyncio.to_thread(stop_daemon_now, "restart")
            interrupted = await first
            again = await conn.prompt(session_id=session, prompt=text_prompt("once more"))
            return interrupted, again

    interrupted, again = asyncio.run(asyncio.wait_for(scenario(), 90))
    assert interrupted.stop_reason == "cancelled"
    assert again.stop_reason == "end_turn"
    assert "Back again." in editor.text()
