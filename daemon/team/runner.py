"""This daemon as a runner of the hub: its connections, its row, its parts.

`HubRunner` is built by the composition root when the global file names a
`hub`. `start` never waits on the database: it opens a pool of connections in
the background (psycopg_pool, checked before each use and reconnecting without
end, so a hub that restarts or is away for an hour is simply used again once
back), then migrates, writes this runner's row in `runners` and renews its
`seen_at` every HEARTBEAT_SECONDS. The parts that make up the runner (the
mirror of this daemon's sessions, the inbox of what other machines send them,
the queue's claims) are started with it and handed the runner, from which they
take connections (`connection`) and notifications (`listener`).

`ready` is set once the hub's tables are known to be current; `problem` says,
in one line, why the hub is not reachable now (None while it is).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import time
from collections.abc import AsyncIterator
from typing import Any, Protocol

import psycopg
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from coding_harness.daemon.config.hub_settings import HubSettings
from coding_harness.daemon.team.connect import HubUnreachable, connection_string, describe
from coding_harness.daemon.team.listener import Listener
from coding_harness.daemon.team.schema import migrate
from coding_harness.protocol.version import __version__

log = logging.getLogger(__name__)
# The pool logs each failed attempt while the hub is away; the runner says it once.
logging.getLogger("psycopg.pool").setLevel(logging.ERROR)

HEARTBEAT_SECONDS = 5.0
# How long a request waits for a connection before the hub counts as away.
CONNECTION_WAIT_SECONDS = 5.0
RETRY_SECONDS = 1.0

Conn = psycopg.AsyncConnection[tuple[Any, ...]]


class RunnerPart(Protocol):
    """One job of the runner, started once the hub's tables are current."""

    async def run(self, runner: HubRunner) -> None: ...


class HubRunner:
    def __init__(self, settings: HubSettings) -> None:
        self.settings = settings
        self.name = settings.runner.name
        self.person = settings.person
        self.host = socket.gethostname()
        self.problem: str | None = "not connected yet"
        self.ready = asyncio.Event()
        self.started_at = time.time()
        self._pool = AsyncConnectionPool(
            connection_string(settings),
            min_size=1,
            max_size=6,
            open=False,
            kwargs={"autocommit": True},
            check=AsyncConnectionPool.check_connection,
            timeout=CONNECTION_WAIT_SECONDS,
            reconnect_timeout=365 * 86_400.0,  # never give up on the hub
            name=f"hub-{self.name}",
        )
        self.listener = Listener(settings)
        self._parts: list[RunnerPart] = []
        self._tasks: list[asyncio.Task[None]] = []

    def add(self, part: RunnerPart) -> None:
        """A part to run once the hub is ready (before `start`)."""
        self._parts.append(part)

    def describe(self) -> str:
        return describe(self.settings)

    def status(self) -> dict[str, Any]:
        """`daemon.status`'s `hub`: which hub, this runner, whether it is reached now."""
        return {
            "hub": self.settings.name,
            "runner": self.name,
            "person": self.person,
            "joined": self.ready.is_set(),
            "problem": self.problem,
        }

    async def start(self) -> None:
        await self._pool.open(wait=False)
        self._tasks.append(asyncio.create_task(self._keep_joined(), name="hub-runner"))
        self._tasks.append(asyncio.create_task(self.listener.run(), name="hub-listener"))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        await self.listener.close()
        with contextlib.suppress(Exception):
            await self._pool.close(timeout=2.0)

    @contextlib.asynccontextmanager
    async def connection(self) -> AsyncIterator[Conn]:
        """A pooled autocommit connection; HubUnreachable when none comes in time."""
        try:
            async with self._pool.connection() as conn:
                yield conn
        except PoolTimeout:
            why = self.listener.last_error or f"no connection within {CONNECTION_WAIT_SECONDS:g} s"
            self.problem = f"{self.describe()} is not reachable now ({why})"
            raise HubUnreachable(self.problem) from None
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            self.problem = f"{self.describe()} is not answering: {_first_line(exc)}"
            raise HubUnreachable(self.problem) from None

    async def _keep_joined(self) -> None:
        """Migrate and join, then renew the runner's row; start the parts once."""
        said = False
        while not self.ready.is_set():
            try:
                async with self.connection() as conn:
                    await migrate(conn)
                    await self._write_row(conn)
                self.problem = None
                self.ready.set()
            except HubUnreachable as exc:
                if not said:
                    log.warning("hub: %s; trying again until it is", exc)
                    said = True
                await asyncio.sleep(RETRY_SECONDS)
        log.info("hub: joined %s as runner %s", self.describe(), self.name)
        for part in self._parts:
            self._tasks.append(asyncio.create_task(part.run(self), name=type(part).__name__))
        while True:
            await asyncio.sleep(HEARTBEAT_SECONDS)
            try:
                async with self.connection() as conn:
                    await self._write_row(conn)
                if self.problem is not None:
                    log.warning("hub: %s is reachable again", self.describe())
                self.problem = None
            except HubUnreachable as exc:
                if self.problem is None:
                    log.warning("hub: %s", exc)
                self.problem = str(exc)

    async def _write_row(self, conn: Conn) -> None:
        runner = self.settings.runner
        now = time.time()
        await conn.execute(
            "INSERT INTO runners (name, person, host, slots, repos, version, started_at, seen_at)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (name) DO UPDATE SET person = excluded.person, host = excluded.host,"
            " slots = excluded.slots, repos = excluded.repos, version = excluded.version,"
            " started_at = excluded.started_at, seen_at = excluded.seen_at",
            (
                self.name,
                self.person,
                self.host,
                runner.slots,
                json.dumps(list(runner.repos)),
                __version__,
                self.started_at,
                now,
            ),
        )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
