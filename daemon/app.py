"""The composition root: builds the daemon's parts and runs its lifecycle.

Startup hardens the process first: non-dumpable (its environ and memory are
closed to the user's other processes), a child subreaper (whatever a tool
command starts stays its descendant: refused on the socket, ended with the
command) and API keys read from systemd credentials. Then the config cache,
provider pool, sessions, turn runner and socket; once the state folder is
locked, what a killed predecessor's tool commands left running is swept. Serve
until a signal or `daemon.shutdown`, then shut down: withdraw the discovery
record and tell the service manager (STOPPING=1), let running turns finish
for `drain_seconds` (a turn waiting for an approval is not waited for), cancel
the rest, close provider connections, remove the socket if this daemon made
it. The record is written once the socket is bound, before anyone is
answered, and READY=1 sent once serving (`service.py`). The steps themselves
(hardening, the record, reload, the watches, the drain) are `lifecycle.py`'s;
this module builds the parts and runs the steps in their order.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psutil

from coding_harness.daemon import lifecycle
from coding_harness.daemon.config.loader import ConfigCache
from coding_harness.daemon.index.hub import IndexHub
from coding_harness.daemon.mcp.hub import McpHub, user_servers
from coding_harness.daemon.methods import MethodParts, build_methods
from coding_harness.daemon.providers.pool import ProviderPool
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.server.rpc import Endpoint
from coding_harness.daemon.server.service import ServiceContext
from coding_harness.daemon.server.socket_server import SocketServer
from coding_harness.daemon.sessions.session import EVENT_LOG_LIMIT, SessionTable
from coding_harness.daemon.store.db import Store
from coding_harness.daemon.store.restore import restore_sessions, tell_store_problem
from coding_harness.daemon.store.state_lock import StateLock
from coding_harness.daemon.tools.builtin import build_tools
from coding_harness.daemon.tools.shell import process_tree, sandbox
from coding_harness.daemon.tools.shell.containment import command_keeper
from coding_harness.daemon.tools.shell.leftovers import RECORD_NAME, LeftoverRecord
from coding_harness.daemon.turns.runner import TurnRunner
from coding_harness.protocol.framing import MAX_MESSAGE_BYTES
from coding_harness.protocol.methods import EventKind
from coding_harness.protocol.version import PROTOCOL_VERSION, __version__

if TYPE_CHECKING:
    from coding_harness.daemon.team.runner import HubRunner

log = logging.getLogger(__name__)

STORE_NAME = "sessions.db"
# How often the daemon checks that its socket path still names its socket.
SELF_CHECK_SECONDS = 5.0
# How long a stop waits for running turns before cancelling them.
DRAIN_SECONDS = 10.0


class Daemon:
    # Set by run(): what the service manager handed over, and where to announce.
    service: ServiceContext | None = None
    # Opened by run() once the instance locks are held (`_take_over_state`).
    store: Store
    _withdrawn = False
    # This daemon as a runner of the team's hub, when the global file names one.
    hub: HubRunner | None = None

    def __init__(
        self,
        *,
        socket_path: Path,
        home: Path,
        state_dir: Path,
        max_message: int = MAX_MESSAGE_BYTES,
    ) -> None:
        self.socket_path = socket_path
        self.home = home
        self.state_dir = state_dir
        self.started_at = time.time()
        self.configs = ConfigCache(home)
        self.pool = ProviderPool()
        self.sessions = SessionTable()
        self.store_path = state_dir / STORE_NAME
        self._state_lock = StateLock(self.store_path)
        self.keeper = command_keeper()
        self.mcp = McpHub(self._announce_on)
        self.index = IndexHub(state_dir, self._announce_index)
        self.turns = TurnRunner(
            configs=self.configs,
            pool=self.pool,
            build_tools=build_tools,
            mcp=self.mcp,
            index=self.index,
        )
        self._stop = asyncio.Event()
        self._background: set[asyncio.Future[Any]] = set()
        self.drain_seconds = DRAIN_SECONDS
        self.self_check_seconds = SELF_CHECK_SECONDS
        self.stopping = False
        self._process = psutil.Process()
        self.server = SocketServer(
            socket_path,
            Endpoint(build_methods(self._method_parts())),
            max_message=max_message,
            classify_peer=self._is_tool_descendant,
            on_disconnect=self._forget,
        )

    def _method_parts(self) -> MethodParts:
        """What the request handlers may reach (the store once `run` has opened it)."""
        return MethodParts(
            home=self.home,
            sessions=self.sessions,
            configs=self.configs,
            turns=self.turns,
            store=lambda: self.store,
            stopping=lambda: self.stopping,
            status=self.status,
            reload=self.reload_configuration,
            request_stop=self.request_stop,
            mcp=self.mcp,
            hub=lambda: self.hub,
        )

    async def run(self, service: ServiceContext | None = None) -> None:
        self.service = service = service or ServiceContext()
        lifecycle.harden(self.keeper)
        try:
            await self.server.start(service.listen_socket, on_bound=self._take_over_state)
        except BaseException:
            lifecycle.remove_discovery_record(service)
            await self.server.close()
            self._state_lock.release()
            raise
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.request_stop)
        loop.add_signal_handler(signal.SIGHUP, self._reload_in_background)
        log.info("harnessd %s serving on %s (pid %d)", __version__, self.socket_path, os.getpid())
        self._announce()
        flusher = asyncio.create_task(
            lifecycle.flush_events_forever(self.sessions), name="event-flusher"
        )
        watch = lifecycle.watch_socket_path(
            self.server, self.self_check_seconds, self.socket_path, self.request_stop
        )
        watcher = asyncio.create_task(watch, name="socket-watch")
        keeping = asyncio.create_task(self.keeper.watch(), name="process-keeper")
        self.mcp.start_eager(user_servers(self.configs.get(self.home).mcp_servers))
        await self._join_hub()
        # Whether bwrap works is found by running it: off the event loop, before a turn asks.
        probing = asyncio.create_task(asyncio.to_thread(sandbox.probe), name="sandbox-probe")
        try:
            await self._stop.wait()
        finally:
            probing.cancel()
            flusher.cancel()
            watcher.cancel()
            log.info("shutting down")
            self._withdraw()
            await lifecycle.drain(self.turns, self.sessions, self.drain_seconds)
            if self.hub is not None:
                await self.hub.stop()
            await self.mcp.stop_all()
            await self.index.close()
            keeping.cancel()
            self.keeper.close()
            await self.server.close()
            await self.pool.aclose()
            lifecycle.flush_events(self.sessions)
            self.store.close()
            self._state_lock.release()
            log.info("stopped")

    async def _join_hub(self) -> None:
        """Join the hub the global file names, if any: in the background, never waiting on
        the database (psycopg is imported only here)."""
        settings = self.configs.get(self.home).hub
        if settings is None:
            return
        from coding_harness.daemon.team.build import RunnerDeps, build_runner

        deps = RunnerDeps(
            home=self.home,
            state_dir=self.state_dir,
            sessions=self.sessions,
            configs=self.configs,
            turns=self.turns,
            store=lambda: self.store,
        )
        self.hub = build_runner(settings, deps)
        await self.hub.start()

    def _announce_on(self, session_id: str, kind: str, data: dict[str, Any]) -> bool:
        """Publish an event on a session, if it is still open (False when it is not)."""
        session = self.sessions.get(session_id)
        if session is None:
            return False
        session.emit(kind, data)
        return True

    def _announce_index(self, root: Path, data: dict[str, Any]) -> None:
        """Tell the sessions on a workspace how its code index is doing."""
        for session in self.sessions.all():
            if session.cwd == root:
                session.emit(EventKind.INDEX_STATE, data)

    async def reload_configuration(self) -> dict[str, Any]:
        """`daemon.reload` and SIGHUP: reload every config in use and retire the pooled
        connections no configured profile names (`lifecycle.reload_configuration`)."""
        folders = {self.home, *(session.cwd for session in self.sessions.all())}
        return await lifecycle.reload_configuration(self.configs, self.pool, folders)

    def _reload_in_background(self) -> None:
        """SIGHUP: what `daemon.reload` does, connections to retired endpoints included."""
        task = asyncio.ensure_future(self.reload_configuration())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def request_stop(self) -> None:
        """Stop taking work: withdraw the record now, before a stop request is answered."""
        try:
            if not self.stopping:
                self._withdraw()
        finally:  # nothing that goes wrong while withdrawing may swallow the stop
            self.stopping = True
            self._stop.set()

    def status(self) -> dict[str, Any]:
        service = self.service or ServiceContext()
        uptime = time.time() - self.started_at
        cpu = self._process.cpu_times()
        cpu_seconds = cpu.user + cpu.system
        # CPU time counts from process start (imports included), so average over that.
        lifetime = max(time.time() - self._process.create_time(), 0.001)
        return {
            "pid": os.getpid(),
            "version": __version__,
            "protocol": PROTOCOL_VERSION,
            "uptime": uptime,
            "started_at": self.started_at,
            "memory_rss": self._process.memory_info().rss,
            "cpu_seconds": cpu_seconds,
            "cpu_percent": 100.0 * cpu_seconds / lifetime,
            "socket": str(self.socket_path),
            "socket_activated": service.socket_activated,
            "sessions": len(self.sessions),
            "clients": len(self.server.connections),
            "attached_clients": sum(1 for conn in self.server.connections if conn.attached),
            "running_turns": self.turns.running(),
            "provider_connections": self.pool.client_count,
            "config_files": self.configs.loaded_files(),
            "log_file": str(service.log_file) if service.log_file else None,
            "drain_seconds": self.drain_seconds,
            "stopping": self.stopping,
            "indexes": self.index.status(),
            "hub": self.hub.status() if self.hub is not None else None,
        }

    def _take_over_state(self) -> None:
        """The socket is ours: lock the state folder, sweep what a killed daemon's
        tools left running, open the store, restore, record.

        Nothing reads or writes the store before both locks are held, so a
        second daemon started by mistake never runs crash recovery over the
        live daemon's sessions. This runs before anyone is answered.
        """
        self._state_lock.acquire()
        self.keeper.keep_record(LeftoverRecord(self.store_path.with_name(RECORD_NAME)))
        self.store = Store(self.store_path)
        self.store.listen(
            lambda session_id, problem: tell_store_problem(self.sessions, session_id, problem)
        )
        self._apply_retention()
        restored = restore_sessions(self.store, self.sessions, EVENT_LOG_LIMIT)
        log.info("restored %d session(s) from %s", restored, self.store.path)
        service = self.service or ServiceContext()
        record = lifecycle.discovery_record(self.socket_path, self.started_at, service)
        lifecycle.write_discovery_record(service, record)

    def _announce(self) -> None:
        """Serving (the record is written): tell the service manager."""
        (self.service or ServiceContext()).notifier.ready(f"serving on {self.socket_path}")

    def _withdraw(self) -> None:
        """Stopping: remove the discovery record, then tell the service manager (once)."""
        if self._withdrawn:
            return
        self._withdrawn = True
        service = self.service or ServiceContext()
        lifecycle.remove_discovery_record(service)
        running = self.turns.running()
        service.notifier.stopping(f"stopping; {running} running turn(s) to finish or cancel")

    def _apply_retention(self) -> None:
        days = self.configs.get(self.home).agent.retention_days
        if days is not None:
            removed = self.store.delete_sessions_before(time.time() - days * 86_400)
            if removed:
                log.info("retention: removed %d session(s) idle for over %g days", removed, days)

    def _forget(self, conn: Connection) -> None:
        self.sessions.detach_everywhere(conn)

    def _is_tool_descendant(self, pid: int | None) -> bool:
        """True when the peer descends from this daemon (a tool's child process).

        The daemon is a child subreaper, so a process that left its parent
        (`setsid`, a double fork) is still found here. A peer that cannot be
        placed (gone already, its parents changing under the walk) counts as
        one; only a platform without peer pids (None) lets every peer in.
        """
        if pid is None:
            return False
        return process_tree.descends_from(pid, os.getpid())
