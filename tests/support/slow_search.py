"""A search that runs for a long time, for the grep tests (no tests of its own).

`RUNAWAY_PATTERN`'s first branch, `(a+)+$` on 34 `a`s and `!` (`write_runaway_line`),
takes a backtracking engine such as Python's `re` about 2^34 steps. ripgrep runs in
linear time, so that branch alone ends at once; the second branch makes ripgrep itself
slow: its lazy DFA keeps throwing its cache away on `a[ab]{20}!` over random a/b text
(about 1 MB/s on a test machine), and no line of `write_slow_text` matches, so no
per-file match limit ends the search early. It is still running many seconds later.
"""

from __future__ import annotations

import os
from pathlib import Path

import psutil

RUNAWAY_PATTERN = "(a+)+$|a[ab]{20}!"
_AB = bytes(ord("ab"[value & 1]) for value in range(256))  # random bytes to random a/b
_LINE = 60  # random a/b characters a line, then 21 'b's and '!': close, never a match


def write_runaway_line(folder: Path) -> Path:
    path = folder / "a.txt"
    path.write_text("a" * 34 + "!\n")
    return path


def write_slow_text(folder: Path, files: int = 3, size: int = 5_000_000) -> None:
    """`files` files of `size` random a/b characters in lines no pattern branch matches
    (each file stays under grep's 8 MB limit), so ripgrep reads every line."""
    for index in range(files):
        raw = os.urandom(size).translate(_AB)
        lines = [raw[at : at + _LINE] + b"b" * 21 + b"!\n" for at in range(0, size, _LINE)]
        (folder / f"ab{index}.txt").write_bytes(b"".join(lines))


def searches(parent_pid: int) -> list[psutil.Process]:
    """The ripgrep processes below `parent_pid` that are running now."""
    found = []
    for child in psutil.Process(parent_pid).children(recursive=True):
        try:
            if child.name() == "rg" and child.status() != psutil.STATUS_ZOMBIE:
                found.append(child)
        except psutil.NoSuchProcess:
            continue
    return found
