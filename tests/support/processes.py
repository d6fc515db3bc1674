"""Starting and stopping real daemons and clients for integration tests.

Every daemon a test starts is stopped afterwards, failure or not: `stop_daemon`
asks politely over the socket, then signals the pid recorded in the lock file.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil

from coding_harness.protocol import errors
from coding_harness.protocol.client import Connection, DaemonUnreachable, connect

ROOT = Path(__file__).resolve().parents[2]


def wait_for_socket(path: Path, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            connect(path, timeout=0.5).close()
            return
        except DaemonUnreachable:
            time.sleep(0.02)
    raise TimeoutError(f"no daemon answered on {path} within {timeout} s")


def answered_by(socket_path: Path, process: subprocess.Popen[bytes], timeout: float = 20.0) -> None:
    """Wait until the daemon `process` itself answers `daemon.status` on `socket_path`,
    or has exited (another daemon serves the socket: a client under test started one).

    A connection that is merely accepted proves less: after a `kill -9`, something
    may still hold the old listening socket for a moment (a crash test saw its first
    connection to the "restarted" daemon reset, and the new daemon had not yet bound
    the path), and a test must talk to the daemon it started.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with client(socket_path, "probe", approvals=False) as conn:
                if conn.request("daemon.status", timeout=5).get("pid") == process.pid:
                    return
        except (OSError, DaemonUnreachable, errors.RpcError):
            pass
        time.sleep(0.02)
    if process.poll() is None:
        raise TimeoutError(f"pid {process.pid} did not answer on {socket_path} within {timeout} s")


def start_daemon(socket_path: Path, env: dict[str, str], *extra: str) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "coding_harness.daemon", "--socket", str(socket_path)]
    err_path = socket_path.parent.parent / "harnessd-test.stderr"
    return start_serving([*command, *extra], env, socket_path, err_path, own_pid=True)


def start_serving(
    command: list[str],
    env: dict[str, str],
    socket_path: Path,
    err_path: Path,
    *,
    own_pid: bool = False,
) -> subprocess.Popen[bytes]:
    """Run `command` (a daemon, however wrapped) until `socket_path` answers (with
    `own_pid`, until the process started answers itself: `answered_by`); its standard
    error goes to `err_path` and is shown if it never does."""
    with err_path.open("wb") as err:
        process = subprocess.Popen(
            command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err
        )
    try:
        wait_for_socket(socket_path)
        if own_pid:
            answered_by(socket_path, process)
    except TimeoutError:
        process.kill()
        process.wait(timeout=5)
        raise TimeoutError(
            f"daemon did not start: {err_path.read_text(errors='replace')}"
        ) from None
    return process


def daemon_pid(socket_path: Path) -> int | None:
    lock = socket_path.with_name(socket_path.name + ".lock")
    try:
        text = lock.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _alive(pid: int) -> bool:
    """Running, as opposed to gone or a zombie waiting for its reaper."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def stop_daemon(socket_path: Path, timeout: float = 10.0) -> None:
    pid = daemon_pid(socket_path)
    if pid is None or not _alive(pid):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.02)
    if _alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def processes_of(socket_path: Path) -> list[psutil.Process]:
    """Every other live process whose environment names `socket_path` as the daemon's
    socket: the daemons and clients a test started (the test process excluded)."""
    found = []
    for process in psutil.process_iter():
        try:
            if process.pid == os.getpid() or process.status() == psutil.STATUS_ZOMBIE:
                continue
            if process.environ().get("CODING_HARNESS_SOCKET") == str(socket_path):
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def stop_everything_of(socket_path: Path, timeout: float = 10.0) -> None:
    """Stop whatever a test left running on its socket, failure or not: its clients
    first (a client that outlived its daemon would start another: clients reconnect
    and start the daemon when it is gone), then its daemon, politely, then anything
    that still names the socket."""
    daemon = daemon_pid(socket_path)
    for process in processes_of(socket_path):
        if process.pid != daemon:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
    stop_daemon(socket_path, timeout)
    left = processes_of(socket_path)
    for process in left:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.kill()
    psutil.wait_procs(left, timeout=timeout)


def accepts(socket_path: Path) -> bool:
    """Whether the daemon on `socket_path` takes a new client now and answers it."""
    try:
        with client(socket_path, "probe") as conn:
            conn.request("daemon.status", timeout=5)
    except (OSError, DaemonUnreachable, errors.RpcError):
        return False
    return True


def client(socket_path: Path, name: str = "test", approvals: bool = True) -> Connection:
    conn = connect(socket_path)
    try:
        conn.initialize(name, "0", approvals=approvals)
    except BaseException:
        conn.close()  # left to the collector, its warning would fail a later test
        raise
    return conn


def run_harness(
    args: list[str],
    *,
    env: dict[str, str],
    cwd: Path,
    input: str | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "coding_harness.client", *args],
        env=env,
        cwd=cwd,
        input=input if input is not None else "",
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def start_harness(args: list[str], *, env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    """`harness ARGS` started in `cwd` and left running, as from a shell of its own
    (standard input closed; `communicate` reads what it printed)."""
    return subprocess.Popen(
        [sys.executable, "-m", "coding_harness.client", *args],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_event(
    conn: Connection, kind: str, timeout: float = 20, **match: Any
) -> dict[str, Any]:
    """The next event of `kind` (whose data has the `match` values), or AssertionError."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        note = conn.next_notification(timeout=deadline - time.monotonic())
        params = note["params"] if note else {}
        data = params.get("data") or {}
        if params.get("kind") == kind and all(data.get(k) == v for k, v in match.items()):
            return dict(params)
    raise AssertionError(f"no {kind} event within {timeout} s")


def events_until_finished(conn: Connection, timeout: float = 60) -> list[dict[str, Any]]:
    """Every event up to and including the next `turn.finished`, or AssertionError."""
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        note = conn.next_notification(timeout=deadline - time.monotonic())
        if note is None:
            break
        seen.append(note["params"])
        if note["params"]["kind"] == "turn.finished":
            return seen
    kinds = [event["kind"] for event in seen[-20:]]
    raise AssertionError(f"no turn.finished within {timeout} s ({len(seen)} events, last {kinds})")
