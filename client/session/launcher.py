"""Find the daemon, or start one in the background and wait for it.

The client never imports the daemon: it starts `python -m
coding_harness.daemon` as its own session leader, with the socket path this
client resolved, and polls the socket for a few seconds. Two clients racing
to start one are fine: the daemon's lock lets one win, and both connect to it;
when the winner was a daemon on its way out (a restart, a crash), another is
started once it has let go. `redial` is how a client whose connection was lost
gets a new one: it starts a daemon when none answers and tries a connection
that is refused, reset or closed before its `initialize` was answered again,
with backoff, within its deadline.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from coding_harness.protocol import paths
from coding_harness.protocol.client import (
    Connection,
    DaemonUnreachable,
    ProtocolViolation,
    connect,
    retry_delay,
)

if TYPE_CHECKING:
    import subprocess
    from collections.abc import Callable

START_TIMEOUT = 8.0
POLL_INTERVAL = 0.03
# After losing the start to a daemon that does not answer: wait this long, start again.
RESPAWN_PAUSE = 0.2
# How long a client whose connection was lost tries to get a new one: a daemon told to
# stop lets running turns finish for up to 10 s, and a new one takes a few to start.
RECONNECT_SECONDS = 20.0

# The daemons this process started: kept, so that a Popen is not collected (and warns)
# while its daemon, which outlives this client, still runs.
_started: list[subprocess.Popen[bytes]] = []


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
    deadline = time.monotonic() + timeout
    process = _start(socket_path)
    last_error = "it did not answer"
    while time.monotonic() < deadline:
        try:
            return connect(socket_path)
        except DaemonUnreachable as exc:
            last_error = str(exc)
        code = process.poll()
        if code not in (None, 0):
            if not _lost_a_race():
                raise DaemonStartFailed(f"the daemon failed to start: {_last_line()}")
            # The lock's holder may be a daemon on its way out that answers no more.
            time.sleep(RESPAWN_PAUSE)
            process = _start(socket_path)
            continue
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


def _start(socket_path: Path) -> subprocess.Popen[bytes]:
    process = spawn_daemon(socket_path)
    _started[:] = [p for p in _started if p.poll() is None]
    _started.append(process)
    return process


def redial(
    socket_path: Path,
    introduce: Callable[[Connection], object],
    *,
    seconds: float = RECONNECT_SECONDS,
) -> Connection:
    """A new connection to the daemon on `socket_path`, started when none answers, and
    introduced by `introduce` (its `initialize`, and whatever else it must send first).
    A connection refused, reset or closed before that was answered (a daemon on its way
    out, or one just killed) is tried again, with backoff, until `seconds` pass; then
    its failure is raised, as is an error the daemon answered."""
    deadline = time.monotonic() + seconds
    attempt = 0
    while True:
        attempt += 1
        try:
            return _dial_once(socket_path, introduce, max(1.0, deadline - time.monotonic()))
        except (DaemonStartFailed, ProtocolViolation):
            raise
        except DaemonUnreachable:
            delay = retry_delay(attempt + 2)  # jittered: under 0.2 s at first, 2 s at most
            if time.monotonic() + delay > deadline:
                raise
            time.sleep(delay)


def _dial_once(
    socket_path: Path, introduce: Callable[[Connection], object], seconds: float
) -> Connection:
    conn = connect_or_start(socket_path, timeout=min(seconds, START_TIMEOUT))
    try:
        introduce(conn)
    except BaseException:
        conn.close()
        raise
    return conn
