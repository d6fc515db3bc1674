"""What the mirror has still to write to the hub: a bounded queue of operations.

The store's observer puts an `Op` for each local write (`Store.observe`); the
mirror's push task takes them in order, in batches, and puts a batch back at the
head when the hub refused it. Nothing here waits or touches the database.

The queue is bounded (MAX_OPS operations, MAX_BYTES of event text): past the
bound, the queued event operations are dropped first (they are the bulk, and
they can be read again from the local store), and their sessions are marked
`behind`; if that is not enough, every queued operation goes and every session
named is behind. While a session is behind, its new events are not queued: the
catch-up (`mirror_catchup.py`) reads them from the store, from what the hub has
on, and clears the mark (`caught_up`). A session behind loses nothing: the
local store is the truth, and the catch-up copies what the hub lacks.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MAX_OPS = 100_000
MAX_BYTES = 64 * 1024 * 1024
# Counted for every operation on top of its text: the tuple, the dict, the names.
OP_OVERHEAD = 200
EVENTS = "events"


@dataclass(slots=True)
class Op:
    """One write to mirror: the observer's `what`, the session, its values."""

    what: str
    session: str
    values: dict[str, Any]
    size: int = OP_OVERHEAD


def op_size(what: str, values: dict[str, Any]) -> int:
    """What an operation holds in memory, roughly: the event text counts."""
    if what == EVENTS:
        return OP_OVERHEAD + sum(len(row[3]) + 64 for row in values["rows"])
    return OP_OVERHEAD


class MirrorQueue:
    def __init__(
        self,
        *,
        max_ops: int = MAX_OPS,
        max_bytes: int = MAX_BYTES,
        on_put: Callable[[], None] = lambda: None,
    ) -> None:
        self.max_ops = max_ops
        self.max_bytes = max_bytes
        self._ops: deque[Op] = deque()
        self._bytes = 0
        self._on_put = on_put
        # Sessions whose queued operations were dropped: the catch-up copies them whole.
        self.behind: set[str] = set()
        self.dropped = 0  # operations dropped since start, for the log

    def __len__(self) -> int:
        return len(self._ops)

    @property
    def size(self) -> int:
        return self._bytes

    def put(self, what: str, session: str, values: dict[str, Any]) -> None:
        """Queue one write; never blocks, never raises for being full."""
        if what == EVENTS and session in self.behind:
            self.dropped += 1  # the catch-up reads them from the store
            return
        op = Op(what, session, values, op_size(what, values))
        self._ops.append(op)
        self._bytes += op.size
        self._bound()
        self._on_put()

    def take(self, max_ops: int, max_bytes: int) -> list[Op]:
        """The oldest operations, at most `max_ops` and about `max_bytes` (at least one)."""
        batch: list[Op] = []
        size = 0
        while self._ops and len(batch) < max_ops and (not batch or size < max_bytes):
            op = self._ops.popleft()
            self._bytes -= op.size
            size += op.size
            batch.append(op)
        return batch

    def requeue(self, batch: list[Op]) -> None:
        """Put back a batch the hub did not take, at the head, in its order."""
        for op in reversed(batch):
            if op.what == EVENTS and op.session in self.behind:
                continue
            self._ops.appendleft(op)
            self._bytes += op.size
        self._bound()

    def caught_up(self, session: str) -> None:
        """The catch-up has read the session's rows: its new events queue again."""
        self.behind.discard(session)

    def _over(self) -> bool:
        return len(self._ops) > self.max_ops or self._bytes > self.max_bytes

    def _bound(self) -> None:
        if not self._over():
            return
        self._drop(lambda op: op.what == EVENTS)
        if self._over():
            self._drop(lambda op: True)

    def _drop(self, which: Callable[[Op], bool]) -> None:
        kept: deque[Op] = deque()
        for op in self._ops:
            if which(op):
                self.behind.add(op.session)
                self.dropped += 1
            else:
                kept.append(op)
        self._ops = kept
        self._bytes = sum(op.size for op in kept)
