"""Find the daemon, or start one in the background and wait for it.

The client never imports the daemon: it starts `python -m
coding_harness.daemon` as its own session leader, with the socket path this
client resolved, and polls the socket for a few seconds. Two clients racing
to start one are fine: the daemon's lock lets one win, and both connect to it.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from coding_harness.protocol import paths
from coding_harness.protocol.client import Connection, DaemonUnreachable, connect

if TYPE_CHECKING:
    import subprocess

START_TIMEOUT = 8.0
POLL_INTERVAL = 0.03


class DaemonStartFailed(DaemonUnreachable):
    pass


def start_log_path() -> Path:
    return paths.state_dir() / "harnessd.stderr"


def spawn_daemon(socket_path: Path) -> subprocess.Popen[bytes]:
    """Start the daemon, its standard error into the state folder; DaemonStartFailed if not."""
    import subprocess  # only when a daemon must be started: it costs ~5 ms

    log_path = start_log_path()
    try:
        paths.ensure_state_dir(log_path.parent)
        log_file = log_path.open("ab")
    except paths.UnsafePathError as exc:
        raise DaemonStartFailed(str(exc)) from None
    except OSError as exc:
        raise DaemonStartFailed(str(paths.state_error(log_path.parent, exc))) from None
    command = [sys.executable, "-m", "coding_harness.daemon", "--socket", os.fspath(socket_path)]
    with log_file:
        try:
            return subprocess.Popen(
                command,
                env=_daemon_environment(),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log_file,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            raise DaemonStartFailed(
                f"cannot run {sys.executable} ({exc.strerror or exc}); reinstall coding-harness"
            ) from None


# A daemon started by hand must not mistake itself for a systemd service.
_SERVICE_VARIABLES = ("NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES")


def _daemon_environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in _SERVICE_VARIABLES}


def connect_or_start(socket_path: Path, *, timeout: float = START_TIMEOUT) -> Connection:
    try:
        return connect(socket_path)
    except DaemonUnreachable:
        pass
    process = spawn_daemon(socket_path)
    deadline = time.monotonic() + timeout
    last_error = "it did not answer"
    while time.monotonic() < deadline:
        try:
            return connect(socket_path)
        except DaemonUnreachable as exc:
            last_error = str(exc)
        code = process.poll()
        if code not in (None, 0) and not _lost_a_race():
            raise DaemonStartFailed(f"the daemon failed to start: {_last_line()}")
        time.sleep(POLL_INTERVAL)
    raise DaemonStartFailed(
        f"the daemon did not answer on {socket_path} within {timeout:.0f} s ({last_error}); "
        f"see {start_log_path()}"
    )


def _last_line() -> str:
    try:
        lines = start_log_path().read_text(errors="replace").strip().splitlines()
    except OSError:
        return "no output"
    return lines[-1] if lines else "no output"


def _lost_a_race() -> bool:
    return "already running" in _last_line()
