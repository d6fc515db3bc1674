"""Reading a workspace file by its relative path without leaving the workspace.

The walk lists a file; by the time it is read (by a parser process, or for
`find_symbol`'s lines) a folder on its way may have become a symlink to another
tree. `read_beneath` opens each folder from the workspace's root down with
`O_NOFOLLOW`, relative to the one above it, and the file itself the same way:
no component can be a symlink, whenever it was swapped in. Only a regular file
is read, up to `limit` bytes.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class NotBeneath(OSError):
    """The path is not a regular file reached without a symlink inside the root."""


def read_beneath(root: Path, path: str, limit: int) -> bytes:
    """Up to `limit` bytes of the regular file `path` ('/'-separated, relative) under
    `root`; `NotBeneath` (an OSError) for `..`, a symlink on the way or not a file."""
    parts = path.split("/")
    if not path or any(part in ("", ".", "..") for part in parts):
        raise NotBeneath(f"'{path}' is not a plain relative path")
    folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            try:
                below = os.open(part, _FOLDER, dir_fd=folder)
            except OSError as exc:  # ELOOP or ENOTDIR: a symlink or a file on the way
                raise NotBeneath(f"'{path}': {exc.strerror or exc}") from None
            os.close(folder)
            folder = below
        try:
            fd = os.open(parts[-1], _FILE, dir_fd=folder)
        except OSError as exc:
            raise NotBeneath(f"'{path}': {exc.strerror or exc}") from None
    finally:
        os.close(folder)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise NotBeneath(f"'{path}' is not a regular file")
        return handle.read(limit)
