"""Which checkpoints go when the store is over its cap: the biggest project's oldest.

One checkpoint store serves every project the daemon works in, so one
repository's recipes must not push another project's undo history out.
`turns_to_drop` is given every checkpoint row (oldest first) and what the blobs
hold on disk; while that is over the target it drops a whole turn: the oldest
turn of the project that holds the most bytes now. A project under its share
keeps its history until the bigger ones have given up theirs. A blob several
rows share is freed only when its last row goes, and counts once per project.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

TurnKey = tuple[str, str]  # (session, turn)


@dataclass(frozen=True, slots=True)
class Held:
    """One checkpoint row as the cap sees it: whose it is and which blob it holds."""

    project: str
    session: str
    turn: str
    blob: str | None
    size: int  # the blob's bytes (0: no blob)


def turns_to_drop(rows: list[Held], total: int, target: int) -> list[TurnKey]:
    """The turns to drop, in order, so that the blobs left hold `target` bytes or fewer
    (of `total` now); a turn goes whole. `rows` oldest first."""
    if total <= target:
        return []
    sizes = {row.blob: row.size for row in rows if row.blob is not None}
    uses = Counter(row.blob for row in rows if row.blob is not None)
    project_uses = Counter((row.project, row.blob) for row in rows if row.blob is not None)
    held: Counter[str] = Counter()
    for project, blob in project_uses:
        held[project] += sizes[blob]
    queues: dict[str, dict[TurnKey, list[Held]]] = {}
    for row in rows:
        queues.setdefault(row.project, {}).setdefault((row.session, row.turn), []).append(row)
    dropped: list[TurnKey] = []
    while total > target and queues:
        project = max(queues, key=lambda name: (held[name], name))
        turns = queues[project]
        key = next(iter(turns))
        for row in turns.pop(key):
            if row.blob is None:
                continue
            uses[row.blob] -= 1
            if uses[row.blob] == 0:
                total -= sizes[row.blob]
            project_uses[(project, row.blob)] -= 1
            if project_uses[(project, row.blob)] == 0:
                held[project] -= sizes[row.blob]
        if not turns:
            del queues[project]
        dropped.append(key)
    return dropped
