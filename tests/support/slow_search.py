"""A search that runs for a long time, for the grep tests (no tests of its own).

`RUNAWAY_PATTERN`'s first branch, `(a+)+$` on 34 `a`s and `!` (`write_runaway_line`),
takes a backtracking engine such as Python's `re` about 2^34 steps. ripgrep runs in
linear time, so that branch alone ends at once; the second branch makes ripgrep itself
slow (its lazy DFA keeps throwing its cache away on `a[ab]{20}!` over random a/b text,
about 1 MB/s on a test machine), so over `write_slow_text` the search is still running
many seconds later.
"""

from __future__ import annotations

import os
from pathlib import Path

import psutil

RUNAWAY_PATTERN = "(a+)+$|a[ab]{20}!"
# Random bytes to a/b text with a line break or a '!' now and then (~85 characters a line).
_AB_TEXT = bytes(
    ord("\n") if value < 3 else ord("!") if value < 5 else ord("ab"[value & 1])
    for value in range(256)
)


def write_runaway_line(folder: Path) -> Path:
    path = folder / "a.txt"
    path.write_text("a" * 34 + "!\n")
    return path


def write_slow_text(folder: Path, files: int = 3, size: int = 6_000_000) -> None:
    """`files` files of random a/b lines (each under grep's 8 MB file limit)."""
    for index in range(files):
        (folder / f"ab{index}.txt").write_bytes(os.urandom(size).translate(_AB_TEXT))


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
