"""The read-only file tools: read_file, list_dir and grep.

All three take paths through `Workspace` (inside the workspace, hidden names
refused), open nothing but regular files (a FIFO or a device would block or
misbehave), and cap what they return so one call cannot flood the context.
They are plain blocking functions; the tool registry runs them in a thread.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.workspace import Workspace, check_not_hidden, is_hidden_name

READ_CAP_CHARS = 200_000
LIST_CAP_ENTRIES = 2_000
GREP_MAX_MATCHES = 500
GREP_MAX_CHARS = 20_000
GREP_LINE_CHARS = 500
GREP_MAX_FILE_BYTES = 8_000_000
GREP_TIME_BUDGET = 30.0
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
    text = decode_text(data, complete, path)
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
            names = [
                entry.name + "/" if entry.is_dir() else entry.name
                for entry in scan
                if not is_hidden_name(entry.name)
            ]
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


@dataclass(kw_only=True, slots=True)
class _GrepReport:
    lines: list[str] = field(default_factory=list)
    chars: int = 0
    stopped: str = ""

    def add(self, line: str) -> bool:
        """Record a match; False once a cap is reached."""
        if len(self.lines) >= GREP_MAX_MATCHES:
            self.stopped = f"stopped after {GREP_MAX_MATCHES} matches"
        elif self.chars + len(line) + 1 > GREP_MAX_CHARS:
            self.stopped = f"stopped at {GREP_MAX_CHARS} characters of output"
        else:
            self.lines.append(line)
            self.chars += len(line) + 1
        return not self.stopped


def grep(workspace: Workspace, pattern: str, path: str) -> str:
    """Matching lines as `path:line:text` under a folder or in one file."""
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise ToolRefusal(f"invalid regular expression {pattern!r}: {exc}") from None
    start = workspace.resolve_visible(path)
    if not start.exists():
        raise ToolRefusal(f"'{path}' does not exist; use list_dir to see what is there")
    if start.is_dir():
        files = _walk(workspace, start)
    else:
        read_regular(start, path, 0)  # refuses FIFOs, devices and the like
        files = iter([(workspace.relative(start), start)])
    report = _GrepReport()
    deadline = time.monotonic() + GREP_TIME_BUDGET
    for rel, real in files:
        if not _grep_file(real, rel, regex, report):
            break
        if time.monotonic() > deadline:
            report.stopped = f"stopped after {GREP_TIME_BUDGET:.0f} s"
            break
    return _render(report, pattern, path)


def _render(report: _GrepReport, pattern: str, path: str) -> str:
    if not report.lines:
        return f"no matches for {pattern!r} in '{path}'"
    text = "\n".join(report.lines)
    if report.stopped:
        text += f"\n[{report.stopped}; narrow the pattern or the path to see the rest]"
    return text


def _walk(workspace: Workspace, top: Path) -> Iterator[tuple[str, Path]]:
    """Visible regular files below `top`, sorted, never leaving the workspace."""
    for folder, dirnames, filenames in os.walk(top):  # symlinked folders: not entered
        dirnames[:] = sorted(name for name in dirnames if not is_hidden_name(name))
        for name in sorted(filenames):
            if is_hidden_name(name):
                continue
            candidate = Path(folder, name)
            real = _safe_target(workspace, candidate)
            if real is not None:
                yield workspace.relative(candidate), real


def _safe_target(workspace: Workspace, candidate: Path) -> Path | None:
    """The file to read for a walk entry, or None when it must be skipped."""
    real = Path(os.path.realpath(candidate)) if candidate.is_symlink() else candidate
    if not workspace.contains(real):
        return None
    try:
        check_not_hidden(real.relative_to(workspace.root))
        info = real.stat()
    except (ToolRefusal, OSError):
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size > GREP_MAX_FILE_BYTES:
        return None
    return real


def _grep_file(real: Path, rel: str, regex: re.Pattern[str], report: _GrepReport) -> bool:
    """Add the file's matching lines; False when the report is full."""
    try:
        data, _ = read_regular(real, rel, GREP_MAX_FILE_BYTES)
        text = decode_text(data, True, rel)
    except ToolRefusal:
        return True  # binary, vanished or unreadable: skipped, as grep -I would
    lines = text.split("\n")
    if lines and not lines[-1]:
        lines.pop()
    for number, raw in enumerate(lines, 1):
        line = raw.removesuffix("\r")
        if regex.search(line) and not report.add(f"{rel}:{number}:{_clip(line)}"):
            return False
    return True


def _clip(line: str) -> str:
    if len(line) <= GREP_LINE_CHARS:
        return line
    return line[:GREP_LINE_CHARS] + f"... [{len(line) - GREP_LINE_CHARS} more characters]"


def _not_a_file(shown: str, mode: int) -> str:
    if stat.S_ISDIR(mode):
        return f"'{shown}' is a folder, not a file; use list_dir to see inside it"
    return f"'{shown}' is {describe_kind(mode)}, not a regular file, so it is not read"
