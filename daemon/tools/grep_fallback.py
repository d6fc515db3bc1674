"""grep's search when ripgrep is missing: Python's `re`, run as a child process.

`code_search.grep` starts `python -I -m coding_harness.daemon.tools.grep_fallback
PATTERN PATH...` in the workspace root through `run_process`, with grep's time limit,
so a pattern that backtracks for hours (`(a*)*b` on a long line of `a`s) is killed at
the limit like ripgrep would be; nothing of it runs in the daemon. `-I` keeps the
workspace (a hostile repository) and PYTHON* variables out of the import path.

A folder is walked with `walk_workspace`, so hidden names are left out and ignore files
obeyed as ripgrep obeys them; a file named on the command line is searched even when
ignored. Binary files (a NUL byte in the first 8 KB) and files over 8 MB are skipped.
Each matching line is printed as ripgrep prints it for grep (`./path NUL line:text`),
in path order, lines past ripgrep's column limit cut, at most a match more than grep
shows. A pattern `re` refuses exits 2 with `regex parse error: ...` on stderr.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from pathlib import Path

from coding_harness.daemon.index.ignore_rules import RIPGREP_IGNORES
from coding_harness.daemon.index.walk import walk_workspace

MAX_FILE_BYTES = 8_000_000  # as GREP_MAX_FILE_BYTES; no import of the daemon's tools
MAX_MATCHES = 501  # one more than grep shows, so it knows there were more
LINE_BYTES = 4_000  # ripgrep's --max-columns for grep
_BINARY_PROBE = 8_192


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        sys.stderr.write("usage: grep_fallback PATTERN PATH...\n")
        return 2
    try:
        regex = re.compile(argv[0])
    except (re.error, RecursionError, OverflowError) as exc:
        sys.stderr.write(f"regex parse error: {exc}\n")
        return 2
    found = 0
    for path in _files(argv[1:]):
        found += _search(regex, path, MAX_MATCHES - found)
        if found >= MAX_MATCHES:
            break
    return 0 if found else 1


def _files(starts: list[str]) -> list[str]:
    """The files to search, './'-prefixed, sorted as grep sorts paths."""
    names: list[str] = []
    for start in starts:
        rel = start.removeprefix("./").removeprefix(".")
        if Path(start).is_dir():
            under = f"{rel}/" if rel else ""
            walk = walk_workspace(Path(), ignore_names=RIPGREP_IGNORES, under=under)
            names.extend(file.path for file in walk.files)
        else:
            names.append(rel)
    names.sort(key=lambda name: name.split("/"))
    return [f"./{name}" for name in names]


def _search(regex: re.Pattern[str], path: str, room: int) -> int:
    """Print the file's matching lines (at most `room`); how many were printed."""
    data = _contents(path)
    if data is None:
        return 0
    out = sys.stdout.buffer
    printed = 0
    text = data.decode("utf-8", "replace")
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if regex.search(line) is None:
            continue
        if len(line.encode("utf-8", "replace")) > LINE_BYTES:
            line = line[: LINE_BYTES + 1]  # grep then says the rest is not shown
        out.write(f"{path}\x00{number}:{line}\n".encode("utf-8", "replace"))
        out.flush()  # what was found before a time-out reaches grep
        printed += 1
        if printed >= room:
            break
    return printed


def _contents(path: str) -> bytes | None:
    """A regular file's bytes; None for binary, too large, missing or unreadable."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            return None
        with os.fdopen(os.dup(fd), "rb") as file:
            data = file.read(MAX_FILE_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if not data or len(data) > MAX_FILE_BYTES or b"\x00" in data[:_BINARY_PROBE]:
        return None
    return data.removesuffix(b"\n")


def _run() -> int:
    try:
        return main(sys.argv[1:])
    except Exception as exc:  # exit 1 would read as "no match"
        sys.stderr.write(f"the Python search failed: {exc!r}\n")
        return 2


if __name__ == "__main__":
    sys.exit(_run())
