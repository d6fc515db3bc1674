"""Reading a file's current text for an edit, and replacing or removing it in one step.

Every write the edit tools make goes through `write_atomically`: the new bytes
go to a file with no name in the target's folder (`O_TMPFILE`), are flushed to
disk and take the old file's mode; only then do they get a temporary name
(`temp_path`) and are renamed over the target, so a crash or a full disk
leaves either the old file or the new one, never half of one, and at most for
an instant a temporary file (which the journal names, so recovery removes it).
Where the file system has no `O_TMPFILE`, the temporary file is named from the
start. `replace_bytes` is the same step for bytes with a mode of the caller's
(undo's restores and its blobs use it). `remove_created` undoes the creation of
a file (and of the folders made for it) when an edit is reverted.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
from pathlib import Path

from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.files import decode_text, read_regular

MAX_EDIT_BYTES = 16_000_000
TEMP_PREFIX = ".harness-"
TEMP_SUFFIX = ".tmp"
# What our temporary names look like, and nothing else: `.harness-` 12 hex digits `.tmp`.
TEMP_NAME = re.compile(r"\.harness-[0-9a-f]{12}\.tmp")
_NO_TMPFILE = (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT)


def read_current(real: Path, rel: str) -> str | None:
    """The file's text, or None when there is no file yet."""
    if not real.exists():
        return None
    data, size = read_regular(real, rel, MAX_EDIT_BYTES + 1)
    if size > MAX_EDIT_BYTES or len(data) > MAX_EDIT_BYTES:
        raise ToolRefusal(f"refused: '{rel}' is too large to edit as a whole file")
    return decode_text(data, True, rel)


def temp_path(target: Path) -> Path:
    """A fresh temporary name next to `target`, for `write_atomically`."""
    return target.with_name(f"{TEMP_PREFIX}{secrets.token_hex(6)}{TEMP_SUFFIX}")


def write_atomically(target: Path, text: str, temp: Path | None = None) -> list[Path]:
    """Replace `target` in one step, by way of `temp`; returns the folders created for it.

    On any error the old file stays as it was, and no new folder or temporary file is left.
    """
    created = _make_parents(target.parent)
    try:
        replace_bytes(target, text.encode("utf-8"), temp)
    except OSError:
        remove_folders(created)
        raise
    return created


def remove_created(target: Path, folders: list[Path]) -> None:
    """Delete a file an edit created, then the folders made for it if they are empty."""
    target.unlink()
    _sync_folder(target.parent)
    remove_folders(folders)


def remove_folders(folders: list[Path]) -> None:
    """Remove folders deepest first; one that is not empty (or gone) is left alone."""
    for folder in reversed(folders):
        with contextlib.suppress(OSError):
            folder.rmdir()


def _make_parents(folder: Path) -> list[Path]:
    """Create missing folders top-down; returns the ones made."""
    missing: list[Path] = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    missing.reverse()
    for each in missing:
        each.mkdir()
    return missing


def replace_bytes(
    target: Path, data: bytes, temp: Path | None = None, mode: int | None = None
) -> None:
    """Put `data` at `target` in one step, fsynced, by way of `temp`; with `mode`, or
    the old file's when None (a new file: the umask's). The parent folder must exist."""
    temp = temp or temp_path(target)
    if mode is None and target.exists():
        mode = stat.S_IMODE(target.stat().st_mode)
    _write_new(temp, data, mode)
    try:
        temp.replace(target)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    _sync_folder(target.parent)


def _write_new(temp: Path, data: bytes, mode: int | None) -> None:
    """`data` under the name `temp`, on disk, with `mode`; nothing left on error."""
    fd = _open_unnamed(temp.parent)
    named = fd is None
    if fd is None:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    try:
        with os.fdopen(fd, "wb", closefd=False) as handle:
            handle.write(data)
        if mode is not None:
            os.fchmod(fd, mode)
        os.fsync(fd)
        if not named:
            _name(fd, temp)
    except BaseException:
        if named:
            with contextlib.suppress(OSError):
                temp.unlink()
        raise
    finally:
        os.close(fd)


def _name(fd: int, temp: Path) -> None:
    """Give the unnamed file `fd` the name `temp` (linkat through /proc, no privilege)."""
    folder = os.open(temp.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        # A dir fd makes os.link use linkat(AT_SYMLINK_FOLLOW), which /proc/self/fd needs.
        os.link(f"/proc/self/fd/{fd}", temp.name, dst_dir_fd=folder, follow_symlinks=True)
    finally:
        os.close(folder)


def _open_unnamed(folder: Path) -> int | None:
    """A file with no name in `folder`, or None where the file system cannot make one."""
    if not hasattr(os, "O_TMPFILE") or not Path("/proc/self/fd").is_dir():
        return None
    try:
        return os.open(folder, os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        if exc.errno in _NO_TMPFILE:
            return None
        raise


def _sync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
