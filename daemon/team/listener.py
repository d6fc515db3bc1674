"""LISTEN/NOTIFY: one connection of the runner's own that wakes the parts.

A notification only wakes: the rows are the truth. Each part says which
channels it wants (`on`) with a callback taking the payload; after every
(re)connection each callback is called once with None, meaning "you may have
missed notifications while away: look at the rows again". A hub that goes away
is reconnected to after RETRY_SECONDS, for as long as the daemon runs.

The channels: `hub_events` ("SESSION:SEQ", a session's events were written up to
SEQ), `hub_inbox` (a runner's name: something waits in its inbox),
`hub_inbox_done` (an inbox row's id: it was applied, its outcome written),
`hub_tasks` (a task was queued or freed) and `hub_task_cancel` (a task's id).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

import psycopg
from psycopg import sql

from coding_harness.daemon.config.hub_settings import HubSettings
from coding_harness.daemon.team.connect import HubUnreachable, open_connection

log = logging.getLogger(__name__)

EVENTS = "hub_events"
INBOX = "hub_inbox"
INBOX_DONE = "hub_inbox_done"
TASKS = "hub_tasks"
TASK_CANCEL = "hub_task_cancel"

RETRY_SECONDS = 1.0
# How long one wait for notifications lasts before new channels are listened to.
POLL_SECONDS = 0.5

Callback = Callable[[str | None], None]


class Listener:
    def __init__(self, settings: HubSettings) -> None:
        self._settings = settings
        self._callbacks: dict[str, list[Callback]] = {}
        self._listening: set[str] = set()
        self._conn: psycopg.AsyncConnection[tuple[object, ...]] | None = None
        self.connected = asyncio.Event()
        # Why the last connection failed or ended (None while connected).
        self.last_error: str | None = None

    def on(self, channel: str, callback: Callback) -> Callable[[], None]:
        """Call `callback` for each notification on `channel`; returns the undo."""
        self._callbacks.setdefault(channel, []).append(callback)

        def off() -> None:
            with contextlib.suppress(ValueError):
                self._callbacks.get(channel, []).remove(callback)

        return off

    async def run(self) -> None:
        while True:
            try:
                self._conn = await open_connection(self._settings)
                self._listening = set()
                await self._serve(self._conn)
            except (HubUnreachable, psycopg.Error) as exc:
                if self.last_error is None:
                    log.info("hub: notifications stopped (%s); reconnecting", exc)
                self.last_error = _reason(exc)
            finally:
                self.connected.clear()
                if self._conn is not None:
                    with contextlib.suppress(Exception):
                        await self._conn.close()
                    self._conn = None
            await asyncio.sleep(RETRY_SECONDS)

    async def _serve(self, conn: psycopg.AsyncConnection[tuple[object, ...]]) -> None:
        await self._listen_to_new(conn)
        self.connected.set()
        self.last_error = None
        self._tell_all(None)  # what was missed while away is in the rows
        while True:
            async for note in conn.notifies(timeout=POLL_SECONDS):
                self._tell(note.channel, note.payload)
            for channel in await self._listen_to_new(conn):
                self._tell(channel, None)

    async def _listen_to_new(self, conn: psycopg.AsyncConnection[tuple[object, ...]]) -> list[str]:
        """LISTEN to the channels asked for since the last call; returns them."""
        new = [channel for channel in list(self._callbacks) if channel not in self._listening]
        for channel in new:
            await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
            self._listening.add(channel)
        return new

    def _tell_all(self, payload: str | None) -> None:
        for callbacks in list(self._callbacks.values()):
            for callback in list(callbacks):
                _call(callback, payload)

    def _tell(self, channel: str, payload: str | None) -> None:
        for callback in list(self._callbacks.get(channel, ())):
            _call(callback, payload)

    async def close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                await self._conn.close()


def _reason(exc: BaseException) -> str:
    text = str(exc).strip()
    if isinstance(exc, HubUnreachable) and ": " in text:
        text = text.split(": ", 1)[1]
    return text.splitlines()[0] if text else type(exc).__name__


def _call(callback: Callback, payload: str | None) -> None:
    try:
        callback(payload)
    except Exception:
        log.exception("hub: a notification's callback failed")
