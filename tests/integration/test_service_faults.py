"""Daemon control under faults: a stop that cannot tidy up, a daemon that turns clients away.

Real `harnessd` and `harness` processes (tests/support/commands.py), with
file permissions enforced even when the tests run as root.
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
from collections.abc import Iterator

import psutil
import pytest

from tests.integration.conftest import Sandbox
from tests.support import waiting
from tests.support.commands import run_command, start_command
from tests.support.processes import wait_for_socket

CONNECTION_CAP = 512  # daemon/server/socket_server.py MAX_CONNECTIONS


def harness(sandbox: Sandbox, *args: str) -> subprocess.CompletedProcess[str]:
    return run_command("harness", list(args), env=sandbox.env, cwd=sandbox.workspace)


def _started_daemon(sandbox: Sandbox) -> subprocess.Popen[bytes]:
    daemon = start_command(
        "harnessd", ["--socket", str(sandbox.socket)], env=sandbox.env, cwd=sandbox.root
    )
    wait_for_socket(sandbox.socket)
    return daemon


def test_the_first_sigterm_stops_a_daemon_whose_record_cannot_be_removed(
    sandbox: Sandbox,
) -> None:
    daemon = _started_daemon(sandbox)
    state = sandbox.root / "state" / "coding-harness"
    record = state / "harnessd.json"
    try:
        assert json.loads(record.read_text())["pid"] == daemon.pid
        state.chmod(0o500)  # the record can be read but no longer removed
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=10) == 0
        stderr = daemon.stderr.read().decode() if daemon.stderr else ""
        assert "Traceback" not in stderr, stderr
    finally:
        state.chmod(0o700)
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait(timeout=10)
        for stream in (daemon.stdout, daemon.stderr):
            if stream:
                stream.close()
    log = (state / "daemon.log").read_text()
    assert "could not remove the discovery record" in log
    assert "stopped" in log


def _unix_sockets(pid: int) -> int:
    """The Unix sockets `pid` holds: its listening socket and every connection it accepted."""
    return len(psutil.Process(pid).net_connections(kind="unix"))


@pytest.fixture
def crowded(sandbox: Sandbox) -> Iterator[subprocess.Popen[bytes]]:
    """A daemon with every connection slot taken."""
    daemon = _started_daemon(sandbox)
    sockets: list[socket.socket] = []
    try:
        for _ in range(CONNECTION_CAP):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sockets.append(sock)
            sock.connect(str(sandbox.socket))
        waiting.wait_for(lambda: _unix_sockets(daemon.pid) > CONNECTION_CAP, "every accept")
        yield daemon
    finally:
        for sock in sockets:
            sock.close()
        daemon.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            daemon.wait(timeout=10)
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait(timeout=10)
        for stream in (daemon.stdout, daemon.stderr):
            if stream:
                stream.close()


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["daemon", "status"], 4),
        (["daemon", "stop"], 4),
        (["daemon", "start"], 4),
        (["sessions"], 4),
    ],
)
def test_a_daemon_at_its_connection_cap_is_reported_in_its_own_words(
    sandbox: Sandbox, crowded: subprocess.Popen[bytes], args: list[str], code: int
) -> None:
    result = harness(sandbox, *args)
    output = result.stdout + result.stderr
    assert "Traceback" not in output, output
    assert result.returncode == code, output
    assert "close some clients" in output, output
    assert "not running" not in output
    assert crowded.poll() is None  # nobody stopped it


def test_doctor_names_a_daemon_at_its_connection_cap(
    sandbox: Sandbox, crowded: subprocess.Popen[bytes]
) -> None:
    result = harness(sandbox, "doctor")
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1
    assert "close some clients" in result.stdout, result.stdout
