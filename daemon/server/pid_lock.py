"""An exclusive lock on a file that names the pid holding it.

Used for the socket's lock (one daemon per socket path) and the state
folder's lock (one daemon per store). `flock` is released by the kernel when
the holder dies, so a crashed daemon never leaves a lock behind.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


class LockHeld(Exception):
    """Another process holds the lock; `owner` is the pid it wrote, or "unknown"."""

    def __init__(self, owner: str) -> None:
        super().__init__(owner)
        self.owner = owner


def take_pid_lock(path: Path) -> int:
    """Lock `path` (created 0600) and write our pid in it; returns the open fd to keep."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        owner = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise LockHeld(owner) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd
