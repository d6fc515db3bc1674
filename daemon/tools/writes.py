"""Reading a file's current text for an edit, and replacing or removing it in one step.

Every write the edit tools make goes through `write_atomically`: the new bytes
go to a temporary file next to the target, are flushed to disk, take the old
file's mode, and are renamed over it, so a crash or a full disk leaves either
the old file or the new one, never half of one. `remove_created` undoes the
creation of a file (and of the folders made for it) when an edit is reverted.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.files import decode_text, read_regular

MAX_EDIT_BYTES = 16_000_000
TEMP_PREFIX = ".harness-"


def read_current(real: Path, rel: str) -> str | None:
    """The file's text, or None when there is no file yet."""
    if not real.exists():
        return None
    data, size = read_regular(real, rel, MAX_EDIT_BYTES + 1)
    if size > MAX_EDIT_BYTES or len(data) > MAX_EDIT_BYTES:
        raise ToolRefusal(f"refused: '{rel}' is too large to edit as a whole file")
    return decode_text(data, True, rel)


def write_atomically(target: Path, text: str) -> list[Path]:
    """Replace `target` in one step; returns the folders created for it.

    On any error the old file stays as it was and no new folder is left.
    """
    created = _make_parents(target.parent)
    try:
        _replace(target, text.encode("utf-8"))
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


def _replace(target: Path, data: bytes) -> None:
    mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else None
    temp = target.with_name(f"{TEMP_PREFIX}{secrets.token_hex(6)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            temp.chmod(mode)
        temp.replace(target)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    _sync_folder(target.parent)


def _sync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
