"""The state folder's lock: one daemon at a time may open the session store.

The socket lock guards one socket path; two daemons started on different
sockets (`--socket`, `CODING_HARNESS_SOCKET`) would still share the state
folder, so the store has its own lock, taken before the database file is
touched and held for the daemon's life. The lock file holds the owner's pid
so the refusal can name it.
"""

from __future__ import annotations

import os
from pathlib import Path

from coding_harness.daemon.server.pid_lock import LockHeld, take_pid_lock
from coding_harness.daemon.server.socket_server import AlreadyRunning

LOCK_SUFFIX = ".lock"


class StateInUse(AlreadyRunning):
    """Another live daemon holds the state folder's lock."""


class StateLock:
    def __init__(self, store_path: Path) -> None:
        self.path = store_path.with_name(store_path.name + LOCK_SUFFIX)
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise `StateInUse` naming the daemon that holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            self._fd = take_pid_lock(self.path)
        except LockHeld as held:
            raise StateInUse(
                f"another daemon (pid {held.owner}) is using the state folder "
                f"{self.path.parent}; stop it first (harness daemon stop) or give this one "
                "its own XDG_STATE_HOME"
            ) from None

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
