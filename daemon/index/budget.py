"""The code indexes' memory budget: how much the tags of each workspace, and of all
of them together, may hold in the daemon.

A repository decides how many definitions and names its files hold; the caps of
`tags.py` (per file) and `code_index.py` (files) alone would let one workspace
hold tens of gigabytes. What a file's tags cost is estimated from their counts
(`tags_bytes`, constants measured with `tracemalloc` on real trees: the
stored tags, the index's name tables and the file graph's share), and
`MemoryBudget` grants it or not: at most `WORKSPACE_BYTES` per workspace and
`TOTAL_BYTES` across all, under one lock, as several workspaces' builds may run
at once. A file that is not granted is held without its tags (`LEFT_OUT`).
`Grants` are one batch's, for one workspace: what it took is given back if the
batch fails.
"""

from __future__ import annotations

import threading
from pathlib import Path

from coding_harness.daemon.index.tags import FileTags

WORKSPACE_BYTES = 256 * 2**20  # one workspace's tags: ~400,000 definitions
TOTAL_BYTES = 512 * 2**20  # all the workspaces' tags the daemon holds at once
# Per item held, with its share of the name tables and the file graph. Measured
# (tracemalloc, a refreshed index): 480 bytes a definition with a unique name and a
# 40-character signature (signatures run to 160), 143 a used name unique to its
# file; the Python standard library and a virtualenv's packages (names repeated)
# hold 0.67 and 0.78 of the estimate.
FILE_BYTES = 600  # a file's entry, its path and its row in the graph
DEFINITION_BYTES = 600  # a definition: its record, signature and name's table entry
REFERENCE_BYTES = 150  # a name a file uses: its count and its edges in the graph
LEFT_OUT = "left out: the code index's memory budget is spent"


def tags_bytes(tags: FileTags) -> int:
    """The estimated memory one file's tags take in the index."""
    return FILE_BYTES + DEFINITION_BYTES * len(tags.rows) + REFERENCE_BYTES * len(tags.references)


class MemoryBudget:
    """Grants bytes to workspaces within their own and the common limit."""

    def __init__(self, workspace_bytes: int = WORKSPACE_BYTES, total_bytes: int = TOTAL_BYTES):
        self.workspace_bytes = workspace_bytes
        self.total_bytes = total_bytes
        self._held: dict[Path, int] = {}
        self._lock = threading.Lock()

    def take(self, root: Path, size: int) -> bool:
        """Grant `size` more bytes to `root`'s index, if both limits allow it."""
        with self._lock:
            held = self._held.get(root, 0)
            total = sum(self._held.values())
            if held + size > self.workspace_bytes or total + size > self.total_bytes:
                return False
            self._held[root] = held + size
            return True

    def give_back(self, root: Path, size: int) -> None:
        with self._lock:
            left = self._held.get(root, 0) - size
            if left > 0:
                self._held[root] = left
            else:
                self._held.pop(root, None)

    def forget(self, root: Path) -> None:
        """`root`'s index is dropped from memory: all it held is free again."""
        with self._lock:
            self._held.pop(root, None)

    def held(self, root: Path | None = None) -> int:
        with self._lock:
            return self._held.get(root, 0) if root is not None else sum(self._held.values())

    def free(self) -> int:
        """What a workspace could still be granted, all limits counted."""
        with self._lock:
            return self.total_bytes - sum(self._held.values())

    def describe(self) -> str:
        workspace, total = self.workspace_bytes // 2**20, self.total_bytes // 2**20
        return f"{workspace} MB a workspace, {total} MB in all"


class Grants:
    """The bytes one batch of files took from the budget for `root`'s index."""

    def __init__(self, budget: MemoryBudget, root: Path) -> None:
        self._budget = budget
        self._root = root
        self.granted = 0

    def take(self, tags: FileTags) -> bool:
        size = tags_bytes(tags)
        if not self._budget.take(self._root, size):
            return False
        self.granted += size
        return True

    def give_back(self, tags: FileTags) -> None:
        size = tags_bytes(tags)
        self._budget.give_back(self._root, size)
        self.granted -= size

    def cancel(self) -> None:
        """The batch's tags will not be held: all it took is free again."""
        self._budget.give_back(self._root, self.granted)
        self.granted = 0
