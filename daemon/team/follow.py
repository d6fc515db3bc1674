"""Following a session that runs on another runner: its event rows, live, to a client.

A client of this daemon that attaches to a session held by another runner of
the hub gets that session's events as if it were held here: the same `event`
notifications with the same `seq`. Each (client, session) pair has a reader
with a cursor, the last seq it sent; the reader asks the hub for the rows
above it, sends them in order, and waits. The `hub_events` notifications
("SESSION:SEQ") wake the readers of that session; a (re)connection of the
listener (None: "rescan") wakes every reader, and a reader looks at the rows
every SLOW_SECONDS anyway, so a notification that never came loses nothing:
the rows are the truth, and the cursor sends none twice.

All the readers of one daemon share the runner's one LISTEN connection
(`runner.listener`); each reads with a pooled connection only while it reads.
A reader ends when its client detaches or goes away.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Callable

from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.server.outgoing import encode_safely
from coding_harness.daemon.sessions.events import Event
from coding_harness.daemon.team.connect import HubUnreachable
from coding_harness.daemon.team.follow_rows import events_after
from coding_harness.daemon.team.listener import EVENTS
from coding_harness.daemon.team.runner import HubRunner

log = logging.getLogger(__name__)

PAGE_EVENTS = 500
# A reader looks at the rows this often even when no notification came.
SLOW_SECONDS = 2.0
# After a failed read (the hub away), the next try comes after this long.
RETRY_SECONDS = 1.0


def send_event(conn: Connection, session_id: str, event: Event) -> None:
    conn.send_encoded(encode_safely(event.notification(session_id)))


class Reader:
    """One client following one session: the rows above `cursor`, as they come."""

    def __init__(self, runner: HubRunner, conn: Connection, session_id: str, cursor: int) -> None:
        self.runner, self.conn, self.session_id, self.cursor = runner, conn, session_id, cursor
        self.wake = asyncio.Event()
        self.wake.set()  # a first look, for what was written while attaching
        self.task: asyncio.Task[None] | None = None

    def nudge(self, seq: int | None) -> None:
        if seq is None or seq > self.cursor:
            self.wake.set()

    async def run(self) -> None:
        while not self.conn.closed.is_set():
            self.wake.clear()
            try:
                async with self.runner.connection() as db:
                    page = await events_after(db, self.session_id, self.cursor, PAGE_EVENTS)
            except HubUnreachable as exc:
                log.debug("hub: following %s: %s", self.session_id, exc)
                await self._wait(RETRY_SECONDS)
                continue
            except Exception:  # a bad row or query: said, and tried again, never silent
                log.exception("hub: reading the events of %s failed", self.session_id)
                await self._wait(SLOW_SECONDS)
                continue
            for event in page:
                if event.seq > self.cursor:
                    send_event(self.conn, self.session_id, event)
                    self.cursor = event.seq
            if len(page) == PAGE_EVENTS:
                if not await self.conn.wait_for_room():
                    return
                continue
            await self._wait(SLOW_SECONDS)

    async def _wait(self, seconds: float) -> None:
        """Until a nudge, the client going away, or `seconds`."""
        waits = [
            asyncio.ensure_future(self.wake.wait()),
            asyncio.ensure_future(self.conn.closed.wait()),
        ]
        try:
            await asyncio.wait(waits, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in waits:
                waiting.cancel()


class Followers:
    """Every reader of one daemon, woken through the runner's one listener."""

    def __init__(self, runner: HubRunner) -> None:
        self.runner = runner
        self._readers: dict[tuple[str, str], Reader] = {}
        self._off: Callable[[], None] | None = None

    def follow(self, conn: Connection, session_id: str, cursor: int) -> Reader:
        """Start sending `conn` the session's events above `cursor` (again, if it was)."""
        self.stop(conn, session_id)
        if self._off is None:
            self._off = self.runner.listener.on(EVENTS, self._notified)
        reader = Reader(self.runner, conn, session_id, cursor)
        key = (conn.id, session_id)
        self._readers[key] = reader
        reader.task = asyncio.create_task(reader.run(), name=f"follow-{session_id}-{conn.id}")
        reader.task.add_done_callback(lambda _: self._ended(key, reader))
        return reader

    def followed_by(self, conn: Connection) -> list[str]:
        """The sessions `conn` follows."""
        return [session for (conn_id, session) in self._readers if conn_id == conn.id]

    def stop(self, conn: Connection, session_id: str) -> bool:
        reader = self._readers.pop((conn.id, session_id), None)
        if reader is None:
            return False
        if reader.task is not None:
            reader.task.cancel()
        return True

    def __len__(self) -> int:
        return len(self._readers)

    def _ended(self, key: tuple[str, str], reader: Reader) -> None:
        if self._readers.get(key) is reader:
            del self._readers[key]
        task = reader.task
        if task is not None and not task.cancelled() and task.exception() is not None:
            log.error("hub: a follower of %s failed", key[1], exc_info=task.exception())
        if not self._readers and self._off is not None:
            self._off()
            self._off = None

    def _notified(self, payload: str | None) -> None:
        if payload is None:  # the listener (re)connected: every reader looks again
            for reader in list(self._readers.values()):
                reader.nudge(None)
            return
        session_id, _, seq = payload.rpartition(":")
        with contextlib.suppress(ValueError):
            number = int(seq)
            for (_, followed), reader in list(self._readers.items()):
                if followed == session_id:
                    reader.nudge(number)


_FOLLOWERS: weakref.WeakKeyDictionary[HubRunner, Followers] = weakref.WeakKeyDictionary()


def followers_of(runner: HubRunner) -> Followers:
    """The daemon's one `Followers`, made at the first follow."""
    found = _FOLLOWERS.get(runner)
    if found is None:
        found = _FOLLOWERS[runner] = Followers(runner)
    return found
