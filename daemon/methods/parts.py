"""What the method handlers may reach: the narrow parts object `MethodParts`.

The composition root (`daemon/app.py`) builds one and hands it to
`build_methods`; every handler takes it as its first argument, so a handler can
be called, and tested, without a daemon or a socket. The store is reached
through a callable because the daemon opens it only once its socket and state
folder are its own (after the methods are registered); `stopping`, `status`,
`reload` and `request_stop` are the daemon's lifecycle, seen from a request.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coding_harness.daemon.config.loader import ConfigCache
from coding_harness.daemon.mcp.hub import McpHub
from coding_harness.daemon.sessions.session import SessionTable
from coding_harness.daemon.store.db import Store
from coding_harness.daemon.turns.runner import TurnRunner

if TYPE_CHECKING:
    from coding_harness.daemon.team.runner import HubRunner


@dataclass(kw_only=True, slots=True, frozen=True)
class MethodParts:
    home: Path  # whose config applies where no workspace is named
    sessions: SessionTable
    configs: ConfigCache
    turns: TurnRunner
    store: Callable[[], Store]
    stopping: Callable[[], bool]  # true once the daemon stops taking work
    status: Callable[[], dict[str, Any]]  # `daemon.status`'s answer
    reload: Callable[[], Awaitable[dict[str, Any]]]  # `daemon.reload`'s work and answer
    request_stop: Callable[[], None]  # `daemon.shutdown`, once the answer is sent
    mcp: McpHub  # the MCP servers the daemon holds
    # This daemon as a runner of the team's hub; None without one (docs/team.md).
    hub: Callable[[], HubRunner | None] = lambda: None
