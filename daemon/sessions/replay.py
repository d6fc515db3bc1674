"""Replaying what a client missed: `session.attach` with `since_seq`, in pages.

The events after `since_seq` go out a page at a time, each page only once
the connection's queue has room again, so a client that fell any number of
events behind catches up without being cut off and without the daemon
holding the gap twice. The connection is subscribed in the same step that
finds nothing left to send, so no live event is missed or sent twice.

The newest events come from the session's log in memory
(`sessions.EVENT_LOG_LIMIT` of them); older ones are read from the store a
page at a time. Only events the store never held (a store that could not be
written) are counted as `missed`; the session's history still holds the
conversation they described.
"""

from __future__ import annotations

from dataclasses import dataclass

from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.sessions.events import Event
from coding_harness.daemon.sessions.session import Session

PAGE_EVENTS = 500


@dataclass(kw_only=True, slots=True)
class Replayed:
    replayed: int = 0
    missed: int = 0


async def replay(session: Session, conn: Connection, since_seq: int) -> Replayed:
    """Send `conn` every kept event after `since_seq`, then subscribe it to live ones."""
    done = Replayed()
    while not conn.closed.is_set():
        page = _older_from_store(session, since_seq) or session.events_after(since_seq, PAGE_EVENTS)
        if not page:
            session.subscribe(conn)
            return done
        done.missed += page[0].seq - since_seq - 1  # older than the log keeps
        for event in page:
            conn.send_encoded(session.framed(event))
        done.replayed += len(page)
        since_seq = page[-1].seq
        if not await conn.wait_for_room():
            break
    return done


def _older_from_store(session: Session, since_seq: int) -> list[Event]:
    """The next page from the store when the in-memory log starts after `since_seq`."""
    kept = session.events_after(since_seq, 1)
    if session.store is None or not kept or kept[0].seq <= since_seq + 1:
        return []
    rows = session.store.events_between(session.id, since_seq, kept[0].seq, PAGE_EVENTS)
    return [Event(seq=seq, kind=kind, data=data, at=at) for seq, kind, data, at in rows]
