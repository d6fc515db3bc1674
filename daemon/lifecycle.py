"""The steps of the daemon's lifecycle that the composition root (`app.py`) runs.

Each takes the parts it needs as arguments; `app.py` builds the parts and
decides the order. Before anything is served the process is hardened
(`harden`). Serving, the daemon's record says who serves the socket
(`discovery_record`, written and removed here), the socket path is watched
(`watch_socket_path`) and events are flushed to the store (`flush_events_forever`);
`daemon.reload` and SIGHUP reload the configuration (`reload_configuration`).
Stopping, running turns are drained (`drain`) before the rest is cancelled.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from coding_harness.daemon.config.loader import ConfigCache
from coding_harness.daemon.providers.pool import ProviderPool, pool_key
from coding_harness.daemon.security.credentials import load_credentials
from coding_harness.daemon.server.service import ServiceContext, remove_record, write_record
from coding_harness.daemon.server.socket_server import SocketServer
from coding_harness.daemon.sessions.session import SessionTable
from coding_harness.daemon.tools.shell import prctl
from coding_harness.daemon.tools.shell.containment import CommandKeeper
from coding_harness.daemon.turns.runner import TurnRunner
from coding_harness.protocol.version import __version__

log = logging.getLogger(__name__)

# Events are written with each completed step, and at least this often.
EVENT_FLUSH_SECONDS = 0.25
DRAIN_POLL_SECONDS = 0.05


def harden(keeper: CommandKeeper) -> None:
    """Before anything is served: close this process to its user's other processes,
    keep every tool descendant its own, and read keys from credential files."""
    if not prctl.make_non_dumpable() and prctl.is_dumpable() is not None:
        log.warning("could not make the daemon non-dumpable: its environ stays readable")
    keeper.enable()
    load_credentials()


def discovery_record(
    socket_path: Path, started_at: float, service: ServiceContext
) -> dict[str, Any]:
    return {
        "pid": os.getpid(),
        "socket": str(socket_path),
        "version": __version__,
        "started_at": started_at,
        "socket_activated": service.socket_activated,
        "log_file": str(service.log_file) if service.log_file else None,
    }


def write_discovery_record(service: ServiceContext, record: dict[str, Any]) -> None:
    """The socket is ours and nobody is answered yet: record who serves it."""
    if service.record_path is not None:
        try:
            write_record(service.record_path, record)
        except OSError as exc:
            log.warning("could not write %s: %s", service.record_path, exc)


def remove_discovery_record(service: ServiceContext) -> None:
    if service.record_path is not None:
        remove_record(service.record_path, os.getpid())


async def reload_configuration(
    configs: ConfigCache, pool: ProviderPool, folders: Iterable[Path]
) -> dict[str, Any]:
    """Reload every config in use (`folders`: the daemon's home and every session's
    workspace) and retire only the pooled connections whose profile (name and
    endpoint origin) is no longer configured; sessions and the other connections
    stay. A turn in flight keeps the profile it resolved when it started."""
    configs.clear()
    log.info("configuration reload requested")
    loaded = [configs.get(folder) for folder in sorted(set(folders))]
    keep = {pool_key(profile) for config in loaded for profile in config.providers.values()}
    retired = await pool.prune(keep)
    problems: list[str] = []
    for config in loaded:
        problems.extend(configs.unreported(config))
    return {
        "reloaded": True,
        "workspaces": len(loaded),
        "closed_connections": len(retired),
        "problems": problems,
    }


async def drain(turns: TurnRunner, sessions: SessionTable, seconds: float) -> None:
    """Let running turns finish for up to `seconds`, then cancel the rest.

    A turn waiting for an approval does not hold the stop: only a person can
    move it on, and the person asked the daemon to stop. It is cancelled
    (exit code 130, history repaired) with whatever is left when the drain ends.
    """
    turns.stop_taking()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    if working_turns(turns, sessions):
        log.info("waiting up to %.0f s for running turns", seconds)
    # Turns and approvals expose no event to wait on; polling during a stop is cheap.
    while working_turns(turns, sessions) and loop.time() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(DRAIN_POLL_SECONDS)
    await turns.close(0)


def working_turns(turns: TurnRunner, sessions: SessionTable) -> int:
    """Running turns that are not waiting for a person's approval."""
    waiting = sum(1 for session in sessions.all() if session.state == "waiting")
    return max(0, turns.running() - waiting)


async def watch_socket_path(
    server: SocketServer, every: float, socket_path: Path, stop: Callable[[], None]
) -> None:
    """Stop when the socket file is deleted or replaced by someone else's.

    Clients could no longer reach this daemon, and the next `harness` would
    start another one. The other socket is left alone.
    """
    while True:
        await asyncio.sleep(every)
        if not server.path_is_ours():
            log.warning("%s is no longer this daemon's socket; stopping", socket_path)
            stop()
            return


async def flush_events_forever(sessions: SessionTable) -> None:
    while True:
        await asyncio.sleep(EVENT_FLUSH_SECONDS)
        flush_events(sessions)


def flush_events(sessions: SessionTable) -> None:
    for session in sessions.all():
        session.flush_events()
