"""The read-only file tools read_file and list_dir, and the file checks other tools share.

Both take paths through `Workspace` (inside the workspace, hidden names
refused), open nothing but regular files (a FIFO or a device would block or
misbehave), and cap what they return so one call cannot flood the context;
an editor's buffer text that read_file shows gets the same cap (`buffer_text`).
list_dir reports an entry it cannot examine (a symlink loop) with a note rather
than failing the listing. They are plain blocking functions; the tool registry
runs them in a thread. grep lives in `code_search.py`.
"""

from __future__ import annotations

import codecs
import errno
import os
import stat
from pathlib import Path

from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.workspace import Workspace, is_hidden_name

READ_CAP_CHARS = 200_000
LIST_CAP_ENTRIES = 2_000
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC


def describe_kind(mode: int) -> str:
    """A few words for a file type that is not a regular file."""
    kinds = {
        stat.S_ISDIR: "a folder",
        stat.S_ISFIFO: "a named pipe (FIFO)",
        stat.S_ISCHR: "a character device",
        stat.S_ISBLK: "a block device",
        stat.S_ISSOCK: "a socket",
    }
    return next((name for test, name in kinds.items() if test(mode)), "not a regular file")


def read_regular(real: Path, shown: str, limit: int) -> tuple[bytes, int]:
    """Up to `limit` bytes of a regular file and the file's size, or `ToolRefusal`."""
    try:
        mode = real.stat().st_mode
        if not stat.S_ISREG(mode):
            raise ToolRefusal(_not_a_file(shown, mode))
        fd = os.open(real, _OPEN_FLAGS)
    except FileNotFoundError:
        raise ToolRefusal(f"'{shown}' does not exist; use list_dir to see what is there") from None
    except OSError as exc:
        raise ToolRefusal(f"cannot read '{shown}': {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):  # swapped since the first look
            raise ToolRefusal(_not_a_file(shown, info.st_mode))
        return handle.read(limit), info.st_size


def decode_text(data: bytes, complete: bool, shown: str) -> str:
    """UTF-8 text, or `ToolRefusal` for content that looks binary."""
    refusal = ToolRefusal(f"'{shown}' is not UTF-8 text (it looks binary), so it is not shown")
    if b"\x00" in data:
        raise refusal
    try:
        return codecs.getincrementaldecoder("utf-8")().decode(data, final=complete)
    except UnicodeDecodeError:
        raise refusal from None


def read_file(workspace: Workspace, path: str) -> str:
    """The text of one file in the workspace, capped at `READ_CAP_CHARS`."""
    real = workspace.resolve_visible(path)
    limit = READ_CAP_CHARS * 4 + 4
    data, size = read_regular(real, path, limit)
    complete = len(data) < limit
    return _shown(decode_text(data, complete, path), path, complete, size)


def buffer_text(text: str, path: str) -> str:
    """An editor buffer's text as read_file shows it: the same cap, the same note for
    an empty file."""
    return _shown(text, path, complete=True, size=len(text))


def _shown(text: str, path: str, complete: bool, size: int) -> str:
    if complete and not text:
        return f"('{path}' is empty; to change it, call propose_edit with old set to \"\")"
    if complete and len(text) <= READ_CAP_CHARS:
        return text
    total = f"{len(text)} characters" if complete else f"{size} bytes"
    return (
        f"{text[:READ_CAP_CHARS]}\n[truncated: showed the first {READ_CAP_CHARS} characters "
        f"of {total}; use grep to find the part you need]"
    )


def list_dir(workspace: Workspace, path: str) -> str:
    """Sorted visible entries of a folder, folders marked with a trailing `/`."""
    real = workspace.resolve_visible(path)
    if not real.is_dir():
        if real.exists():
            raise ToolRefusal(f"'{path}' is a file, not a folder; use read_file to see it")
        raise ToolRefusal(f"'{path}' does not exist; try list_dir with '.'")
    try:
        with os.scandir(real) as scan:
            names = [_entry_line(entry) for entry in scan if not is_hidden_name(entry.name)]
    except OSError as exc:
        raise ToolRefusal(f"cannot list '{path}': {exc.strerror or exc}") from None
    names.sort()
    if not names:
        return f"('{path}' is empty)"
    shown = "\n".join(names[:LIST_CAP_ENTRIES])
    if len(names) > LIST_CAP_ENTRIES:
        more = len(names) - LIST_CAP_ENTRIES
        shown += f"\n[... {more} more entries not shown; list a subfolder instead]"
    return shown


def _entry_line(entry: os.DirEntry[str]) -> str:
    """The entry's name, `/` after a folder; a note instead when it cannot be examined."""
    try:
        return entry.name + "/" if entry.is_dir() else entry.name
    except OSError as exc:  # a symlink loop, a vanished entry, no permission
        if exc.errno == errno.ELOOP:
            return f"{entry.name} (a symlink loop: it leads nowhere)"
        return f"{entry.name} (cannot be examined: {exc.strerror or exc})"


def _not_a_file(shown: str, mode: int) -> str:
    if stat.S_ISDIR(mode):
        return f"'{shown}' is a folder, not a file; use list_dir to see inside it"
    return f"'{shown}' is {describe_kind(mode)}, not a regular file, so it is not read"
