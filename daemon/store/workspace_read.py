"""Reading a workspace file for a checkpoint: never through a symlink, never past a limit.

Undo's store reads files that the agent's commands may have changed or swapped
since they were last looked at: a file replaced by a symlink to `~/.ssh/id_rsa`,
a FIFO whose reader would block, a file that grew after it was measured.
`read_regular` takes the path apart from the workspace's root: its folder must
resolve inside the root, the file is opened with `O_NOFOLLOW | O_NONBLOCK`, the
open file (not the path) is checked to be a regular file, and at most `limit`
bytes and one more are read, so a size measured earlier is never trusted.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class NotReadable(OSError):
    """The path holds something a checkpoint does not keep: no regular file, a file
    past the limit, or a way out of the workspace."""


class TooLarge(NotReadable):
    """A regular file past the limit."""


def inside(root: Path, path: Path) -> bool:
    """Whether `path`'s folder, resolved, is the workspace's root or under it."""
    real_root = root.resolve()
    parent = path.parent.resolve()
    return parent == real_root or real_root in parent.parents


def read_regular(root: Path, rel: str, limit: int) -> tuple[bytes, int] | None:
    """The bytes and permission bits of `root/rel`; None when there is no file there.

    Raises `TooLarge` past `limit` bytes, `NotReadable` for a symlink, a folder, a
    FIFO or a device, or a path whose folder leads out of the workspace, and other
    `OSError`s as the system gives them."""
    path = root / rel
    if not inside(root, path):
        raise NotReadable(f"{rel} leads out of the workspace")
    try:
        fd = os.open(path.parent.resolve() / path.name, _OPEN_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a symlink
            raise NotReadable(f"{rel} is a symlink") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotReadable(f"{rel} is not a regular file")
        data = _read_at_most(fd, limit + 1)
        if len(data) > limit:
            raise TooLarge(f"{rel} is over {limit} bytes")
        return data, stat.S_IMODE(info.st_mode)
    finally:
        os.close(fd)


def _read_at_most(fd: int, most: int) -> bytes:
    chunks: list[bytes] = []
    left = most
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
