"""Events to the hub as they are emitted, not only as they are stored.

A session's events reach the local store every 0.25 s (`flush_events_forever`).
So that someone following a session from another machine sees it live, the
mirror also reads each live session's in-memory log every TAIL_SECONDS and
queues what is new. Both sources feed one cursor per session (the highest seq
queued): each queues only the events past it, in order, so every event is
queued once, whichever source saw it first.

The memory is read only when it holds every event past the cursor (its oldest
kept event is at most the next one); otherwise the store's rows bring them. A
session whose cursor is unknown (restored at start, before the first
catch-up) is left to the store and the catch-up, which set its cursor.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from coding_harness.daemon.sessions.session import Session
from coding_harness.daemon.store.rows import dump
from coding_harness.daemon.team.mirror_queue import EVENTS, MirrorQueue

TAIL_SECONDS = 0.02
# Events read from one session's memory at a time.
TAIL_LIMIT = 5000


class Tail:
    def __init__(self, queue: MirrorQueue) -> None:
        self._queue = queue
        self.cursor: dict[str, int] = {}

    def new_session(self, sid: str) -> None:
        """A session created now: its events are numbered from 1."""
        self.cursor.setdefault(sid, 0)

    def stored(self, sid: str, rows: list[Any]) -> None:
        """The store wrote these event rows: queue those past the cursor."""
        last = self.cursor.get(sid)
        fresh = rows if last is None else [row for row in rows if row[1] > last]
        if fresh:
            self.cursor[sid] = fresh[-1][1]
            self._queue.put(EVENTS, sid, {"rows": fresh})

    def read_memory(self, sessions: Iterable[Session]) -> None:
        """Queue what each live session emitted past its cursor and still holds."""
        for session in sessions:
            last = self.cursor.get(session.id)
            if last is None or session.last_seq <= last or session.first_kept_seq > last + 1:
                continue
            events = session.events_after(last, TAIL_LIMIT)
            if not events:
                continue
            rows = [(session.id, e.seq, e.kind, dump(e.data), e.at) for e in events]
            self.cursor[session.id] = events[-1].seq
            self._queue.put(EVENTS, session.id, {"rows": rows})

    def caught_up(self, sid: str, last: int, dropped: bool) -> None:
        """The catch-up copied the session's stored events up to `last`. When its queued
        events were dropped, the cursor goes back there (what follows is queued again);
        otherwise what is queued past it stays, in order."""
        if dropped or sid not in self.cursor:
            self.cursor[sid] = last
        else:
            self.cursor[sid] = max(self.cursor[sid], last)
