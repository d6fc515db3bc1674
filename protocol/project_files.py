"""Reading a repository's own files by name: a regular file in the folder, never a link.

A project file (`.local_coding_harness.json`, `.mcp.json`) arrives with the
repository, and so can a symbolic link in its place: to a file the user trusted
in another project, or to `~/.ssh/id_rsa`. `read_project_file` opens the name
without following a link (`O_NOFOLLOW`), so what it reads is the file whose
real path is that name in that folder; a link, or anything but a regular file
(a FIFO would hang the reader), is refused with `ProjectFileRefused`, whose
message names the file and the fix. Standard library only: the daemon and the
`harness trust` command read project files the same way.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

# A config file larger than this is not one anybody wrote by hand.
READ_LIMIT = 1024 * 1024


class ProjectFileRefused(ValueError):
    """A project file that is a symbolic link or not a regular file; never read."""


def read_project_file(path: Path, limit: int | None = READ_LIMIT) -> bytes | None:
    """The bytes of `path` (at most `limit` + 1, so a caller can tell it is too big; all
    of them with None), None when it does not exist; `ProjectFileRefused` for a link
    or a non-regular file, `OSError` when it cannot be read."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP or path.is_symlink():
            raise ProjectFileRefused(_link_refusal(path)) from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ProjectFileRefused(
                f"{path}: not a regular file, so it was not read; replace it with a plain file"
            )
        chunks: list[bytes] = []
        left = limit + 1 if limit is not None else -1
        while left != 0 and (chunk := os.read(fd, 65536 if left < 0 else min(left, 65536))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _link_refusal(path: Path) -> str:
    try:
        target = f" (to {path.readlink()})"
    except OSError:
        target = ""
    return (
        f"{path} is a symbolic link{target}; a project file must be a regular file in "
        f"the project folder, so it was not read: replace the link with a copy of the "
        f"file you mean, review it, and run `harness trust` in {path.parent}"
    )
