"""Replaying what a client missed: `session.attach` with `since_seq`, in pages.

The events after `since_seq` go out a page at a time, each page only once
the connection's queue has room again, so a client that fell any number of
events behind catches up without being cut off and without the daemon
holding the gap twice. The connection is subscribed in the same step that
finds nothing left to send, so no live event is missed or sent twice.

Replay reaches back as far as the session's event log in memory
(`sessions.EVENT_LOG_LIMIT` events, reloaded from the store at start-up);
events older than that are counted as `missed`, and the session's history
still holds the conversation they described.
"""

from __future__ import annotations

from dataclasses import dataclass

from .connection import Connection
from .sessions import Session

PAGE_EVENTS = 500


@dataclass(kw_only=True, slots=True)
class Replayed:
    replayed: int = 0
    missed: int = 0


async def replay(session: Session, conn: Connection, since_seq: int) -> Replayed:
    """Send `conn` every kept event after `since_seq`, then subscribe it to live ones."""
    done = Replayed()
    while not conn.closed.is_set():
        page = session.events_after(since_seq, PAGE_EVENTS)
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
