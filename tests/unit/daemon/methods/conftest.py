"""Real parts for the method handlers, without a daemon or its socket.

`parts` is a `MethodParts` over a real SessionTable, a real Store in tmp_path, a
real ConfigCache (one configured provider, `local`, in the home folder's config)
and a real TurnRunner; the daemon's lifecycle (status, reload, stop) is what
`Lifecycle` records. A handler's connection is a real `Connection` over a
socketpair (`connected`), whose far end reads what the handler sent.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from coding_harness.daemon.config.loader import ConfigCache
from coding_harness.daemon.mcp.hub import McpHub
from coding_harness.daemon.methods.parts import MethodParts
from coding_harness.daemon.providers.pool import ProviderPool
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.sessions.session import SessionTable
from coding_harness.daemon.store.db import Store
from coding_harness.daemon.tools.builtin import build_tools
from coding_harness.daemon.turns.runner import TurnRunner

PROVIDERS = {
    "local": {"endpoint": "http://127.0.0.1:9/v1", "model": "small"},
    "other": {"endpoint": "http://127.0.0.1:9/v2", "model": "big"},
}


@dataclass(kw_only=True, slots=True)
class Lifecycle:
    """The daemon's side of `daemon.*`, recorded."""

    stopping: bool = False
    stops: int = 0
    reloads: int = 0

    def request_stop(self) -> None:
        self.stops += 1

    async def reload(self) -> dict[str, Any]:
        self.reloads += 1
        return {"reloaded": True}


@dataclass(kw_only=True, slots=True)
class Rig:
    parts: MethodParts
    lifecycle: Lifecycle
    home: Path
    workspace: Path
    store: Store


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    home, workspace = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    workspace.mkdir()
    config = {"providers": PROVIDERS, "default_provider": "local"}
    (home / ".coding_harness.json").write_text(json.dumps(config))
    store = Store(tmp_path / "state" / "sessions.db")
    configs = ConfigCache(home, trust_store=tmp_path / "trust.json")
    pool = ProviderPool()
    lifecycle = Lifecycle()
    parts = MethodParts(
        home=home,
        sessions=SessionTable(),
        configs=configs,
        turns=TurnRunner(configs=configs, pool=pool, build_tools=build_tools),
        store=lambda: store,
        stopping=lambda: lifecycle.stopping,
        status=lambda: {"pid": 1},
        reload=lifecycle.reload,
        request_stop=lifecycle.request_stop,
        mcp=McpHub(lambda session, kind, data: None),
    )
    yield Rig(parts=parts, lifecycle=lifecycle, home=home, workspace=workspace, store=store)
    store.close()


@asynccontextmanager
async def connected(*, can_approve: bool = True) -> AsyncIterator[Connection]:
    """A real connection whose peer is a socketpair's far end."""
    near, far = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    _reader, writer = await asyncio.open_unix_connection(sock=near)
    conn = Connection(writer, peer_pid=None)
    conn.initialized, conn.can_approve = True, can_approve
    try:
        yield conn
    finally:
        conn.close()
        for _ in range(5):
            await asyncio.sleep(0)
        far.close()
