"""harnessd started the way systemd starts it: socket activation and sd_notify."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from coding_harness.protocol import discovery
from tests.integration.conftest import Sandbox
from tests.support.processes import client, run_harness, start_daemon
from tests.support.service import activated_daemon, listening_socket

LINUX_ONLY = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="abstract notify sockets are Linux-only"
)


def record_file(sandbox: Sandbox):
    return discovery.record_path(sandbox.env)


@pytest.mark.parametrize("how", ["harness daemon stop", pytest.param("SIGTERM", marks=LINUX_ONLY)])
def test_activated_daemon_serves_inherited_socket_and_notifies(sandbox: Sandbox, how: str) -> None:
    # A path notify socket for one run, an abstract '@' one for the other.
    notify_path = sandbox.root / "notify" if how != "SIGTERM" else None
    with activated_daemon(sandbox.socket, sandbox.env, notify_path=notify_path) as daemon:
        assert "STATUS=serving on" in daemon.notify.wait_for("READY=1")
        with client(sandbox.socket) as conn:
            status = conn.request("daemon.status")
        assert status["pid"] == daemon.process.pid
        assert status["socket_activated"] is True
        assert status["socket"] == str(sandbox.socket)
        record = json.loads(record_file(sandbox).read_text())
        assert record["pid"] == daemon.process.pid and record["socket_activated"] is True
        # systemd guards the socket; the daemon takes no lock beside it.
        assert not sandbox.socket.with_name("harnessd.sock.lock").exists()

        if how == "SIGTERM":
            daemon.process.send_signal(signal.SIGTERM)
        else:
            stopped = run_harness(["daemon", "stop"], env=sandbox.env, cwd=sandbox.workspace)
            assert stopped.returncode == 0, stopped.stderr
            assert f"harnessd stopped (pid {daemon.process.pid})" in stopped.stdout
        daemon.notify.wait_for("STOPPING=1")
        assert daemon.process.wait(timeout=15) == 0
        # The daemon did not create the socket, so it leaves it to systemd.
        assert sandbox.socket.exists()
        assert not record_file(sandbox).exists()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.connect(str(sandbox.socket))  # queued for the next daemon systemd starts


def test_activation_ignores_a_lock_still_held_by_a_daemon_started_by_hand(
    sandbox: Sandbox,
) -> None:
    sandbox.socket.parent.mkdir(mode=0o700)
    lock = os.open(sandbox.socket.with_name("harnessd.sock.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with activated_daemon(sandbox.socket, sandbox.env) as daemon:
            daemon.notify.wait_for("READY=1")
            with client(sandbox.socket) as conn:
                assert conn.request("daemon.status")["pid"] == daemon.process.pid
    finally:
        os.close(lock)


def test_inherited_socket_in_a_shared_folder_is_refused_with_exit_78(sandbox: Sandbox) -> None:
    sandbox.socket.parent.mkdir(mode=0o755)
    sandbox.socket.parent.chmod(0o755)
    with activated_daemon(sandbox.socket, sandbox.env) as daemon:
        assert daemon.process.wait(timeout=15) == 78
        assert sandbox.socket.exists()
    err = (sandbox.root / "harnessd-activated.stderr").read_text()
    assert "chmod 700" in err


def test_record_is_gone_before_a_stop_is_answered(sandbox: Sandbox) -> None:
    process = start_daemon(sandbox.socket, sandbox.env)
    try:
        record = json.loads(record_file(sandbox).read_text())
        assert record["pid"] == process.pid and record["socket"] == str(sandbox.socket)
        assert record["socket_activated"] is False
        with client(sandbox.socket) as conn:
            assert conn.request("daemon.shutdown") == {"stopping": True}
            assert not record_file(sandbox).exists()  # already gone when the answer came
        assert process.wait(timeout=15) == 0
        assert not sandbox.socket.exists()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=5)


def test_listen_pid_of_another_process_is_not_adopted(sandbox: Sandbox) -> None:
    """An inherited LISTEN_* meant for a parent: the daemon binds its own socket."""
    foreign = listening_socket(sandbox.root / "foreign" / "s.sock")
    env = {**sandbox.env, "LISTEN_FDS": "1", "LISTEN_PID": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "coding_harness.daemon", "--socket", str(sandbox.socket)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        pass_fds=(foreign.fileno(),),
    )
    try:
        deadline = time.monotonic() + 10
        while not record_file(sandbox).exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        with client(sandbox.socket) as conn:
            status = conn.request("daemon.status")
        assert status["socket_activated"] is False and status["pid"] == process.pid
    finally:
        process.terminate()
        process.wait(timeout=10)
        foreign.close()


def test_status_and_stop_do_not_wake_an_idle_socket_unit(sandbox: Sandbox) -> None:
    """No daemon runs, systemd listens: connecting would start one just to report on it."""
    runtime = sandbox.root / "rt"
    runtime.mkdir(mode=0o700)
    env = {k: v for k, v in sandbox.env.items() if k != "CODING_HARNESS_SOCKET"}
    env["XDG_RUNTIME_DIR"] = str(runtime)
    env["PATH"] = str(Path(sys.executable).parent)  # no systemctl: install writes files only
    assert run_harness(["daemon", "install"], env=env, cwd=sandbox.workspace).returncode == 0
    listener = listening_socket(runtime / "coding-harness" / "harnessd.sock")
    try:
        status = run_harness(["daemon", "status"], env=env, cwd=sandbox.workspace)
        assert status.returncode == 4 and "harnessd.socket listens" in status.stdout
        stop = run_harness(["daemon", "stop"], env=env, cwd=sandbox.workspace)
        assert stop.returncode == 0 and "not running" in stop.stdout
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected
    finally:
        listener.close()
