"""The composition root: builds the daemon's parts and runs its lifecycle.

Startup (config cache, provider pool, sessions, turn runner, socket), serve
until a signal or `daemon.shutdown`, then shut down: stop accepting, cancel
running turns, close provider connections, remove the socket.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from pathlib import Path
from typing import Any

import psutil

from coding_harness.protocol.framing import MAX_MESSAGE_BYTES
from coding_harness.protocol.version import PROTOCOL_VERSION, __version__

from .config import ConfigCache
from .connection import Connection
from .methods import build_methods
from .providers.pool import ProviderPool
from .rpc import Endpoint
from .server import SocketServer
from .sessions import SessionTable
from .tools.builtin import build_tools
from .turns import TurnRunner

log = logging.getLogger(__name__)

# How long a stop waits for running turns before cancelling them.
DRAIN_SECONDS = 10.0


class Daemon:
    def __init__(
        self, *, socket_path: Path, home: Path, max_message: int = MAX_MESSAGE_BYTES
    ) -> None:
        self.socket_path = socket_path
        self.home = home
        self.started_at = time.time()
        self.configs = ConfigCache(home)
        self.pool = ProviderPool()
        self.sessions = SessionTable()
        self.turns = TurnRunner(configs=self.configs, pool=self.pool, build_tools=build_tools)
        self._stop = asyncio.Event()
        self.drain_seconds = DRAIN_SECONDS
        self.stopping = False
        self._process = psutil.Process()
        self.server = SocketServer(
            socket_path,
            Endpoint(build_methods(self)),
            max_message=max_message,
            classify_peer=self._is_tool_descendant,
            on_disconnect=self._forget,
        )

    async def run(self) -> None:
        await self.server.start()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.request_stop)
        loop.add_signal_handler(signal.SIGHUP, self.reload)
        log.info("harnessd %s serving on %s (pid %d)", __version__, self.socket_path, os.getpid())
        try:
            await self._stop.wait()
        finally:
            log.info("shutting down")
            await self.turns.close(self.drain_seconds)
            await self.server.close()
            await self.pool.aclose()
            log.info("stopped")

    def reload(self) -> None:
        """Forget loaded configs; the next session or submit reads the files again.

        A turn in flight keeps the profile it resolved when it started.
        """
        self.configs.clear()
        log.info("configuration reload requested")

    def request_stop(self) -> None:
        self.stopping = True
        self._stop.set()

    def status(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "version": __version__,
            "protocol": PROTOCOL_VERSION,
            "uptime": time.time() - self.started_at,
            "memory_rss": self._process.memory_info().rss,
            "socket": str(self.socket_path),
            "sessions": len(self.sessions),
            "clients": len(self.server.connections),
            "running_turns": self.turns.running(),
        }

    def _forget(self, conn: Connection) -> None:
        self.sessions.detach_everywhere(conn)

    def _is_tool_descendant(self, pid: int | None) -> bool:
        """True when the peer descends from this daemon (a tool's child process)."""
        if pid is None:
            return False
        try:
            return any(parent.pid == os.getpid() for parent in psutil.Process(pid).parents())
        except psutil.Error:
            return False
