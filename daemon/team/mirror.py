"""The mirror: every session of this runner copied to the hub, once, through outages.

The local SQLite store stays the truth. The mirror observes it (`Store.observe`):
after each local write the observer puts what was written in a bounded queue
(`mirror_queue.py`) and wakes the push task; it never waits and never fails the
write. The push task writes the queue to the hub in batches, one transaction
each (`mirror_sql.py`); a batch the hub refuses is put back and written again
once the hub answers, every statement being safe to replay.

What the store does not write (a session's state, title and cost) is looked at
every LIVE_SECONDS and written when it changed. On every (re)connection (the
listener's None), after a failed push, and for sessions whose queued events
were dropped because the queue was full, the catch-up (`mirror_catchup.py`)
copies from the local store what the hub lacks, before anything else is
pushed: so the hub gets every event of a session, in order, none twice.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import psycopg

from coding_harness.daemon.team.connect import HubUnreachable
from coding_harness.daemon.team.listener import EVENTS as EVENTS_CHANNEL
from coding_harness.daemon.team.mirror_catchup import lagging, local_heads, session_ops
from coding_harness.daemon.team.mirror_queue import EVENTS, MAX_BYTES, MAX_OPS, MirrorQueue, Op
from coding_harness.daemon.team.mirror_sql import Who, write_batch
from coding_harness.daemon.team.mirror_tail import TAIL_SECONDS, Tail
from coding_harness.daemon.team.runner import HubRunner

if TYPE_CHECKING:
    from coding_harness.daemon.sessions.session import SessionTable
    from coding_harness.daemon.store.db import Store

log = logging.getLogger(__name__)

LIVE_SECONDS = 1.0
RETRY_SECONDS = 1.0
BATCH_OPS = 5000
BATCH_BYTES = 4 * 1024 * 1024


class MirrorDeps(Protocol):
    """What the mirror reads of the daemon (`build.RunnerDeps` has it)."""

    @property
    def sessions(self) -> SessionTable: ...

    @property
    def store(self) -> Callable[[], Store]: ...


class Mirror:
    """A part of the runner (`build.py`): this daemon's sessions, written to the hub."""

    def __init__(
        self, deps: MirrorDeps, *, max_ops: int = MAX_OPS, max_bytes: int = MAX_BYTES
    ) -> None:
        self._deps = deps
        self._wake = asyncio.Event()
        self.queue = MirrorQueue(max_ops=max_ops, max_bytes=max_bytes, on_put=self._wake.set)
        self.tail = Tail(self.queue)
        self._catch_up_all = True
        self._live: dict[str, tuple[Any, ...]] = {}
        self._who = Who("", "", "")

    def observe(self, what: str, session: str, values: dict[str, Any]) -> None:
        """The store's observer: queue what was written, wake the push task."""
        if what == EVENTS:
            self.tail.stored(session, values["rows"])
            return
        if what == "create_session":
            self.tail.new_session(session)
        self.queue.put(what, session, values)

    async def run(self, runner: HubRunner) -> None:
        self._who = Who(runner.name, runner.person, runner.host)
        stop_observing = self._deps.store().observe(self.observe)
        stop_listening = runner.listener.on(EVENTS_CHANNEL, self._notified)
        live = asyncio.create_task(self._watch_forever(), name="hub-mirror-live")
        self._wake.set()
        try:
            await self._push_forever(runner)
        finally:
            stop_observing()
            stop_listening()
            live.cancel()

    def _notified(self, payload: str | None) -> None:
        if payload is None:  # (re)connected: notifications may have been missed, and writes
            self._catch_up_all = True
            self._wake.set()

    async def _push_forever(self, runner: HubRunner) -> None:
        said = False
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                await self._push(runner)
                if said:
                    log.info(
                        "hub: the mirror writes again (%d operations dropped so far)",
                        self.queue.dropped,
                    )
                said = False
            except HubUnreachable as exc:
                if not said:
                    log.warning("hub: the mirror waits for the hub (%s)", exc)
                said = True
                self._catch_up_all = True
                await asyncio.sleep(RETRY_SECONDS)
                self._wake.set()
            except psycopg.Error:
                log.exception("hub: the mirror's catch-up failed; trying again")
                await asyncio.sleep(RETRY_SECONDS)
                self._wake.set()

    async def _push(self, runner: HubRunner) -> None:
        if self._catch_up_all or self.queue.behind:
            await self._catch_up(runner)
        while len(self.queue):
            batch = self.queue.take(BATCH_OPS, BATCH_BYTES)
            await self._write(runner, batch)

    async def _write(self, runner: HubRunner, batch: list[Op]) -> None:
        """One transaction; put back when the hub is away, dropped (and said) when it
        refuses the rows themselves (which writing again would not change)."""
        try:
            async with runner.connection() as conn:
                await write_batch(conn, batch, self._who)
        except HubUnreachable:
            self.queue.requeue(batch)
            raise
        except asyncio.CancelledError:
            self.queue.requeue(batch)
            raise
        except psycopg.Error:
            log.exception("hub: the hub refused %d operations; they are not mirrored", len(batch))

    async def _catch_up(self, runner: HubRunner) -> None:
        everything, self._catch_up_all = self._catch_up_all, False
        try:
            async with runner.connection() as conn:
                cursor = await conn.execute(
                    "SELECT id, last_seq FROM sessions WHERE runner = %s", (self._who.runner,)
                )
                hub = {str(sid): int(seq) for sid, seq in await cursor.fetchall()}
            db = self._deps.store().reader()
            local = local_heads(db)
            behind = set(self.queue.behind)
            if not everything:
                local = {sid: last for sid, last in local.items() if sid in behind}
            for sid in behind - set(local):
                self.queue.caught_up(sid)  # no longer stored here: nothing to copy
            todo = lagging(local, hub, behind)
            if todo:
                log.info("hub: catching up %d session(s)", len(todo))
            self._live.clear()  # the live rows are written again too
            for sid, after in todo.items():
                dropped = sid in behind
                self.queue.caught_up(sid)  # its events from now on are queued again
                ops = list(session_ops(db, sid, after))
                pages = [op.values["rows"][-1][1] for op in ops if op.what == EVENTS]
                self.tail.caught_up(sid, max(pages, default=after), dropped)
                await self._copy(runner, ops)
            for sid, last in hub.items():
                if sid not in todo and sid not in self.tail.cursor:
                    self.tail.caught_up(sid, last, dropped=False)
        except BaseException:
            self._catch_up_all = self._catch_up_all or everything
            raise

    async def _copy(self, runner: HubRunner, ops: list[Op]) -> None:
        """A session's rows in transactions of one page of events each."""
        batch: list[Op] = []
        for op in ops:
            batch.append(op)
            if op.what == EVENTS:
                await self._write_or_fail(runner, batch)
                batch = []
        if batch:
            await self._write_or_fail(runner, batch)

    async def _write_or_fail(self, runner: HubRunner, batch: list[Op]) -> None:
        async with runner.connection() as conn:
            await write_batch(conn, batch, self._who)

    async def _watch_forever(self) -> None:
        """Every TAIL_SECONDS the new events in memory, every LIVE_SECONDS the state."""
        every = max(1, round(LIVE_SECONDS / TAIL_SECONDS))
        tick = 0
        while True:
            await asyncio.sleep(TAIL_SECONDS)
            tick += 1
            try:
                self.tail.read_memory(self._deps.sessions.all())
                if tick % every == 0:
                    self.refresh_live()
            except Exception:
                log.exception("hub: reading the sessions failed")

    def refresh_live(self) -> None:
        """Queue the state, title and cost of each live session that changed."""
        seen = set()
        for session in self._deps.sessions.all():
            seen.add(session.id)
            values = {
                "cwd": str(session.cwd),
                "title": session.title,
                "state": session.state,
                "provider": session.provider,
                "model": session.model,
                "created_at": session.created_at,
                "last_activity": session.last_activity,
                "cost_usd": session.cost_usd,
            }
            key = tuple(values.values())
            if self._live.get(session.id) != key:
                self._live[session.id] = key
                self.queue.put("live", session.id, values)
        for sid in set(self._live) - seen:
            del self._live[sid]
