"""Store writes the disk refused: kept in order, replayed, and what to tell people.

A write that fails because of the disk (full, a file-size limit, an I/O error,
a read-only folder) is rolled back whole, so no partial row is ever visible,
and kept here. Every later write replays what is kept first, in order and in
the same transaction, so once there is room again nothing is missing. A
history write replaces a session's messages from an index on, so a later one
from the same or an earlier index makes a kept one unnecessary; events are
the only writes given up, oldest first, when the backlog outgrows its limit
(the session still holds them in memory for replay to clients). While the
disk refuses, writes are tried again after a growing pause rather than at
every call, and a retry is scheduled on the event loop so what is kept gets
written once there is room even when the daemon is otherwise idle.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from coding_harness.daemon.store.open_db import transaction

log = logging.getLogger(__name__)

Apply = Callable[[sqlite3.Connection], object]
# Told with a session id and the problem, or None once its history is saved again;
# returns False when it could not reach that session (it is then told at the next failure).
Listener = Callable[[str, str | None], bool]

BACKLOG_LIMIT_CHARS = 64 * 1024 * 1024
# While the disk refuses writes, they are only kept, and tried again after a pause
# that doubles from the first to the longest (on the event loop, when one runs).
RETRY_FIRST_SECONDS, RETRY_LONGEST_SECONDS = 0.25, 4.0


@dataclass(kw_only=True, slots=True)
class Write:
    """One store write, ready to apply inside a transaction."""

    apply: Apply
    session: str | None = None
    size: int = 0  # characters of the rows it carries
    # A history write: replaces the session's messages from this index on.
    messages_from: int | None = None
    # Events only: may be given up when the backlog grows too large.
    droppable: bool = False


class Backlog:
    """The writes not made yet, in the order they were asked for."""

    def __init__(self) -> None:
        self._writes: list[Write] = []
        self._chars = 0
        self.dropped_events = 0

    def __bool__(self) -> bool:
        return bool(self._writes)

    def add(self, write: Write) -> None:
        if write.messages_from is not None:
            self._writes = [w for w in self._writes if not _superseded(w, write)]
        self._writes.append(write)
        self._chars = sum(w.size for w in self._writes)
        while self._chars > BACKLOG_LIMIT_CHARS and self._drop_oldest_events():
            pass

    def discard(self, write: Write) -> None:
        """Forget a write that failed for a reason of its own (a bug), not the disk's."""
        self._writes = [w for w in self._writes if w is not write]
        self._chars = sum(w.size for w in self._writes)

    def writes(self) -> list[Write]:
        return list(self._writes)

    def sessions(self) -> set[str]:
        return {w.session for w in self._writes if w.session is not None}

    def clear(self) -> None:
        self._writes, self._chars = [], 0

    def _drop_oldest_events(self) -> bool:
        for index, write in enumerate(self._writes):
            if write.droppable:
                del self._writes[index]
                self._chars -= write.size
                self.dropped_events += 1
                return True
        return False


class StoreWriter:
    """Applies writes after everything kept, one transaction each, and reports."""

    def __init__(self, db: sqlite3.Connection, folder: Path) -> None:
        self._db = db
        self._folder = folder
        self._backlog = Backlog()
        self.listener: Listener | None = None
        # Why writes fail now (None while they work), and the sessions told so.
        self.problem: str | None = None
        self._told: set[str] = set()
        self._pause = 0.0
        self._not_before = 0.0
        self._timer: asyncio.TimerHandle | None = None

    def write(self, *writes: Write) -> bool:
        """Apply what is kept, then `writes`; False (and all kept) when the disk refused,
        or refuses now and the pause before the next try has not passed.

        A write that fails for a reason of its own (a bug) is not kept: it raises."""
        for each in writes:
            self._backlog.add(each)
        if self.problem is not None and time.monotonic() < self._not_before:
            self._failing(self.problem)  # a session not told yet hears of it now
            return False
        try:
            return self.retry()
        except sqlite3.Error:
            for each in writes:
                self._backlog.discard(each)
            raise

    def retry(self) -> bool:
        """Apply what is kept; True when nothing is left to write."""
        if not self._backlog:
            return True
        try:
            with transaction(self._db) as db:
                for each in self._backlog.writes():
                    each.apply(db)
        except sqlite3.Error as exc:
            problem = write_problem(exc, self._folder)
            if problem is None:
                raise
            self._failing(problem)
            self._back_off()
            return False
        self._backlog.clear()
        self._pause = 0.0
        if self.problem is not None:
            self._recovered()
        return True

    def stop(self) -> None:
        """No more scheduled retries (the store is closing)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _back_off(self) -> None:
        self._pause = min(max(self._pause * 2, RETRY_FIRST_SECONDS), RETRY_LONGEST_SECONDS)
        self._not_before = time.monotonic() + self._pause
        if self._timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no loop (a tool or a test): the next write tries
                return
            self._timer = loop.call_later(self._pause, self._retry_later)

    def _retry_later(self) -> None:
        self._timer = None
        try:
            self.retry()
        except sqlite3.Error:
            log.exception("session store: a kept write failed for its own reason; dropped")
            self._backlog.clear()

    def _failing(self, problem: str) -> None:
        if problem != self.problem:
            log.error("session store in %s: history not saved: %s", self._folder, problem)
        self.problem = problem
        for session_id in sorted(self._backlog.sessions() - self._told):
            if self.listener is not None and self.listener(session_id, problem):
                self._told.add(session_id)

    def _recovered(self) -> None:
        dropped = self._backlog.dropped_events
        log.warning(
            "session store in %s: writable again%s",
            self._folder,
            f"; {dropped} batch(es) of events were given up" if dropped else "",
        )
        self.problem, self._backlog.dropped_events = None, 0
        told, self._told = self._told, set()
        for session_id in sorted(told):
            if self.listener is not None:
                self.listener(session_id, None)


def _superseded(kept: Write, new: Write) -> bool:
    """A kept history write the new one overwrites entirely."""
    return (
        kept.session == new.session
        and kept.messages_from is not None
        and new.messages_from is not None
        and kept.messages_from >= new.messages_from
    )


def write_problem(exc: BaseException, folder: Path) -> str | None:
    """What a failed write means, in words for the user; None when it is not the disk's
    doing (a bug: constraint, misuse), which must not be kept and retried."""
    if type(exc) not in (sqlite3.OperationalError, sqlite3.DatabaseError):
        return None
    name = str(getattr(exc, "sqlite_errorname", ""))
    text = str(exc)
    if name == "SQLITE_FULL" or "full" in text:
        return (
            f"disk full (the state folder is full: {folder}); free some space there "
            "and saving resumes by itself"
        )
    if name.startswith("SQLITE_READONLY") or "readonly" in text:
        return f"the state folder {folder} is read-only; make it writable to save again"
    if name.startswith("SQLITE_IOERR") or "I/O" in text:
        return (
            f"the state folder {folder} could not be written ({text}); check the disk "
            "(free space, file-size limits) and saving resumes by itself"
        )
    if name in ("SQLITE_BUSY", "SQLITE_LOCKED") or "locked" in text:
        return f"the session store is locked by another program ({text}); retrying"
    return f"the session store could not be written ({text}); restart the daemon"
