"""`harness daemon status|stop|restart|logs` through the real `harness` command."""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

from coding_harness.protocol import discovery
from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support import waiting
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import client, daemon_pid, run_harness, start_daemon
from tests.support.service import stop_process


def harness(sandbox: Sandbox, *args: str) -> subprocess.CompletedProcess[str]:
    return run_harness(list(args), env=sandbox.env, cwd=sandbox.workspace)


@contextlib.contextmanager
def background(sandbox: Sandbox, *args: str) -> Iterator[subprocess.Popen[str]]:
    """A `harness` run in the background (stdin at end of input); always ended."""
    process = subprocess.Popen(
        [sys.executable, "-m", "coding_harness.client", *args],
        env=sandbox.env,
        cwd=sandbox.workspace,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=10)


def daemon_status(sandbox: Sandbox) -> dict[str, Any]:
    with client(sandbox.socket, approvals=False) as conn:
        result: dict[str, Any] = conn.request("daemon.status")
        return result


def session_states(sandbox: Sandbox) -> list[str]:
    with client(sandbox.socket, approvals=False) as conn:
        return [s["state"] for s in conn.request("session.list")["sessions"]]


def test_status_shows_every_field_and_exits_4_without_daemon(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    none = harness(sandbox, "daemon", "status")
    assert none.returncode == 4 and "not running" in none.stdout
    model.add(Reply(content="hello back"))
    assert harness(sandbox, "-p", "say hello").returncode == 0
    result = harness(sandbox, "daemon", "status")
    assert result.returncode == 0, result.stderr
    fields = dict(line.split(None, 1) for line in result.stdout.splitlines())
    assert fields["pid"] == str(daemon_pid(sandbox.socket))
    assert fields["version"] == "0.1.0"
    assert "MiB" in fields["memory"] and "% on average" in fields["cpu"]
    assert fields["socket"] == str(sandbox.socket)
    assert fields["sessions"] == "1"
    assert "connected" in fields["clients"]
    assert fields["providers"] == "1 connection(s)"
    assert fields["configs"] == str(sandbox.home / ".coding_harness.json")
    assert fields["log"] == str(sandbox.root / "state" / "coding-harness" / "daemon.log")
    assert "warning" not in result.stdout


def test_status_reports_a_record_that_does_not_match(sandbox: Sandbox) -> None:
    process = start_daemon(sandbox.socket, sandbox.env)
    try:
        path = discovery.record_path(sandbox.env)
        record = json.loads(path.read_text())
        gone = subprocess.Popen([sys.executable, "-c", "pass"])
        gone.wait()
        path.write_text(json.dumps({**record, "pid": gone.pid, "socket": "/elsewhere.sock"}))
        result = harness(sandbox, "daemon", "status")
        assert result.returncode == 0
        warnings = [line for line in result.stdout.splitlines() if line.startswith("warning:")]
        assert any(f"pid {gone.pid}, which is not running" in w for w in warnings)
        assert any("/elsewhere.sock" in w for w in warnings)
    finally:
        stop_process(process)


def test_stop_lets_a_running_turn_finish(sandbox: Sandbox, model: FakeModelServer) -> None:
    model.add(Reply(content="finished in time", delay=1.0))
    process = start_daemon(sandbox.socket, sandbox.env, "--drain-seconds", "20")
    try:
        with background(sandbox, "-p", "fix the bug in calc.py") as oneshot:
            waiting.wait_for(lambda: daemon_status(sandbox)["running_turns"] == 1, "a running turn")
            stopped = harness(sandbox, "daemon", "stop")
            out, err = oneshot.communicate(timeout=20)
            assert oneshot.returncode == 0, err
            assert "finished in time" in out
        assert stopped.returncode == 0, stopped.stderr
        assert "letting 1 running turn(s) finish for up to 20 s" in stopped.stdout
        assert f"harnessd stopped (pid {process.pid})" in stopped.stdout
        assert process.wait(timeout=10) == 0
    finally:
        stop_process(process)


def test_stop_cancels_a_turn_that_outlasts_the_drain(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    model.add(Reply(content="too late", delay=2.0))
    process = start_daemon(sandbox.socket, sandbox.env, "--drain-seconds", "0.3")
    try:
        with background(sandbox, "-p", "fix the bug in calc.py") as oneshot:
            waiting.wait_for(lambda: daemon_status(sandbox)["running_turns"] == 1, "a running turn")
            assert harness(sandbox, "daemon", "stop").returncode == 0
            _, err = oneshot.communicate(timeout=20)
            assert oneshot.returncode == 130, err  # cancelled: the model would have answered
    finally:
        stop_process(process)


def test_a_turn_waiting_for_approval_does_not_hold_the_stop(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    (sandbox.workspace / "calc.py").write_text(BUGGY)
    model.add(Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]))
    process = start_daemon(sandbox.socket, sandbox.env, "--drain-seconds", "30")
    try:
        with background(sandbox, "-p", "fix the bug in calc.py") as oneshot:
            waiting.wait_for(lambda: session_states(sandbox) == ["waiting"], "the session to wait")
            started = time.monotonic()
            stopped = harness(sandbox, "daemon", "stop")
            assert stopped.returncode == 0, stopped.stderr
            assert time.monotonic() - started < 10  # not the 30 s drain
            _, err = oneshot.communicate(timeout=20)
            assert oneshot.returncode == 130, err
        assert (sandbox.workspace / "calc.py").read_text() == BUGGY
    finally:
        stop_process(process)


def test_restart_replaces_the_daemon(sandbox: Sandbox) -> None:
    assert harness(sandbox, "daemon", "start").returncode == 0
    first = daemon_pid(sandbox.socket)
    result = harness(sandbox, "daemon", "restart")
    assert result.returncode == 0, result.stderr
    second = daemon_pid(sandbox.socket)
    assert first is not None and second is not None and first != second
    assert f"harnessd stopped (pid {first})" in result.stdout
    assert f"harnessd running (pid {second})" in result.stdout
    assert daemon_status(sandbox)["pid"] == second


def test_logs_tail_and_follow(sandbox: Sandbox) -> None:
    log = sandbox.root / "state" / "coding-harness" / "daemon.log"
    log.parent.mkdir(parents=True)
    log.write_text("".join(f"old {n}\n" for n in range(10)))
    tail = harness(sandbox, "daemon", "logs", "-n", "3")
    assert tail.returncode == 0 and tail.stdout == "old 7\nold 8\nold 9\n"
    follower = subprocess.Popen(
        [sys.executable, "-m", "coding_harness.client", "daemon", "logs", "-f", "-n", "1"],
        env=sandbox.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert follower.stdout is not None
        assert read_line(follower.stdout) == b"old 9\n"
        with log.open("a") as file:
            file.write("appended\n")
        assert read_line(follower.stdout) == b"appended\n"
        log.rename(log.with_name("daemon.log.1"))  # as the daemon rotates it
        log.write_text("after rotation\n")
        assert read_line(follower.stdout) == b"after rotation\n"
    finally:
        follower.kill()
        follower.wait(timeout=5)
        if follower.stdout is not None:
            follower.stdout.close()


def read_line(stream: Any, timeout: float = 10.0) -> bytes:
    """One line from a pipe, without blocking past `timeout`."""
    data = b""
    deadline = time.monotonic() + timeout
    while not data.endswith(b"\n"):
        ready, _, _ = select.select([stream], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, f"no line within {timeout} s (got {data!r})"
        chunk = os.read(stream.fileno(), 1)
        assert chunk, "follower exited"
        data += chunk
    return data
