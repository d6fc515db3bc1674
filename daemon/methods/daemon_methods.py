"""`initialize` and the `daemon.*` methods.

`initialize` may carry a `session` to create or join in the same request
(`session_open.py`); when that part fails, the error is session.create's or
session.attach's and the connection stays uninitialized, so a client may
initialize again (or fall back to the separate requests).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from coding_harness.daemon.config.loader import ConfigError
from coding_harness.daemon.methods.params import refuse_tool_children
from coding_harness.daemon.methods.session_methods import session_of
from coding_harness.daemon.methods.session_open import SessionOpener
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.server.rpc import MethodTable
from coding_harness.protocol import errors
from coding_harness.protocol import methods as m
from coding_harness.protocol.version import PROTOCOL_VERSION, SUPPORTED_PROTOCOLS, __version__

if TYPE_CHECKING:
    from coding_harness.daemon.app import Daemon
    from coding_harness.daemon.sessions.session import Session


def _supported(protocol: Any) -> bool:
    return (
        isinstance(protocol, int)
        and not isinstance(protocol, bool)
        and protocol in SUPPORTED_PROTOCOLS
    )


def register(table: MethodTable, daemon: Daemon) -> None:
    opener = SessionOpener(daemon)

    @table.register(m.INITIALIZE)
    async def initialize(
        conn: Connection,
        protocol: Any,
        client: Any = None,
        capabilities: Any = None,
        session: Any = None,
    ) -> dict[str, Any]:
        if conn.initialized:
            raise errors.AlreadyInitialized()
        if not _supported(protocol):
            low, high = SUPPORTED_PROTOCOLS[0], SUPPORTED_PROTOCOLS[-1]
            raise errors.UnsupportedProtocol(
                f"protocol {protocol!r} is not supported; this daemon speaks {low}..{high}"
            )
        _introduce(conn, client, capabilities)
        opened = await _open(opener, conn, session)
        notice = None
        if isinstance(capabilities, dict) and capabilities.get("notices"):
            notice, daemon.store.notice = daemon.store.notice, None  # to one client, once
        result = {
            "notice": notice,
            "daemon": {"name": "harnessd", "version": __version__, "pid": os.getpid()},
            "protocol": PROTOCOL_VERSION,
            "client_id": conn.id,
            "key_env": daemon.configs.get(daemon.home).key_env_names(),
        }
        if opened is not None:
            result["session"] = opened
        return result

    @table.register(m.DAEMON_STATUS)
    async def daemon_status(conn: Connection) -> dict[str, Any]:
        return daemon.status()

    @table.register(m.STATS_GET)
    async def stats_get(conn: Connection, session: Any = None) -> dict[str, Any]:
        """Token and cost totals: one session's, and the daemon's per provider and day."""
        result: dict[str, Any] = {"daily": daemon.store.totals_by_provider_day()}
        if session is not None:
            target = session_of(daemon, session)
            result["session"] = {
                "usage": target.usage.to_wire(),
                "cost_usd": target.cost_usd,
                **_rates(daemon, target),
            }
        return result

    @table.register(m.DAEMON_SHUTDOWN)
    async def daemon_shutdown(conn: Connection) -> dict[str, Any]:
        refuse_tool_children(conn)
        conn.after_response(daemon.request_stop)
        return {"stopping": True}


def _introduce(conn: Connection, client: Any, capabilities: Any) -> None:
    conn.initialized = True
    if isinstance(client, dict):
        conn.client_name = str(client.get("name", "unknown"))[:64]
    conn.can_approve = bool(isinstance(capabilities, dict) and capabilities.get("approvals"))


async def _open(opener: SessionOpener, conn: Connection, session: Any) -> dict[str, Any] | None:
    """The session `initialize` names, created or joined; when that fails, the
    connection is left uninitialized and the error is the session request's."""
    if session is None:
        return None
    try:
        return await opener.open(conn, session)
    except BaseException:
        conn.initialized = False
        raise


def _rates(daemon: Daemon, session: Session) -> dict[str, Any]:
    """The session's profile and its pricing (USD per million tokens), for /tokens."""
    try:
        profile = daemon.configs.get(session.cwd).profile(session.provider)
    except ConfigError:
        return {"provider": session.provider, "pricing": None}
    pricing = dict(profile.pricing) if profile.pricing else None
    return {"provider": profile.name, "pricing": pricing}
