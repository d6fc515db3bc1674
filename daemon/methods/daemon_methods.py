"""`initialize` and the `daemon.*` methods.

`initialize` may carry a `session` to create or join in the same request
(`session_open.py`); when that part fails, the error is session.create's or
session.attach's and the connection stays uninitialized, so a client may
initialize again (or fall back to the separate requests).
"""

from __future__ import annotations

import os
from typing import Any

from coding_harness.daemon.config.profiles import ConfigError
from coding_harness.daemon.methods.lookup import session_of
from coding_harness.daemon.methods.params import refuse_tool_children
from coding_harness.daemon.methods.parts import MethodParts
from coding_harness.daemon.methods.session_open import open_session
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.server.rpc import Handler
from coding_harness.daemon.sessions.session import Session
from coding_harness.protocol import errors
from coding_harness.protocol import methods as m
from coding_harness.protocol.version import PROTOCOL_VERSION, SUPPORTED_PROTOCOLS, __version__


def _supported(protocol: Any) -> bool:
    return (
        isinstance(protocol, int)
        and not isinstance(protocol, bool)
        and protocol in SUPPORTED_PROTOCOLS
    )


async def initialize(
    parts: MethodParts,
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
    opened = await _open(parts, conn, session)
    notice = None
    if isinstance(capabilities, dict) and capabilities.get("notices"):
        store = parts.store()
        notice, store.notice = store.notice, None  # to one client, once
    result = {
        "notice": notice,
        "daemon": {"name": "harnessd", "version": __version__, "pid": os.getpid()},
        "protocol": PROTOCOL_VERSION,
        "client_id": conn.id,
        "key_env": parts.configs.get(parts.home).key_env_names(),
    }
    if opened is not None:
        result["session"] = opened
    return result


async def daemon_status(parts: MethodParts, conn: Connection) -> dict[str, Any]:
    return parts.status()


async def stats_get(parts: MethodParts, conn: Connection, session: Any = None) -> dict[str, Any]:
    """Token and cost totals: one session's, and the daemon's per provider and day."""
    result: dict[str, Any] = {"daily": parts.store().usage.totals_by_provider_day()}
    if session is not None:
        target = session_of(parts, session)
        result["session"] = {
            "usage": target.usage.to_wire(),
            "cost_usd": target.cost_usd,
            **_rates(parts, target),
        }
    return result


async def daemon_shutdown(parts: MethodParts, conn: Connection) -> dict[str, Any]:
    refuse_tool_children(conn)
    conn.on_answer(parts.request_stop)
    return {"stopping": True}


def _introduce(conn: Connection, client: Any, capabilities: Any) -> None:
    conn.initialized = True
    if isinstance(client, dict):
        conn.client_name = str(client.get("name", "unknown"))[:64]
    announced = capabilities if isinstance(capabilities, dict) else {}
    conn.can_approve = bool(announced.get("approvals"))
    # `"own"` (an editor's bridge): it answers only the turns its client started.
    conn.answers_others = announced.get("approvals") is True
    # A process the agent's tools started must not feed read_file: it only ever reads.
    conn.reads_buffers = announced.get("read_text_file") is True and not conn.is_tool_descendant
    conn.writes_buffers = conn.reads_buffers and announced.get("write_text_file") is True


async def _open(parts: MethodParts, conn: Connection, session: Any) -> dict[str, Any] | None:
    """The session `initialize` names, created or joined; when that fails, the
    connection is left uninitialized and the error is the session request's."""
    if session is None:
        return None
    try:
        return await open_session(parts, conn, session)
    except BaseException:
        conn.initialized = False
        raise


def _rates(parts: MethodParts, session: Session) -> dict[str, Any]:
    """The session's profile and its pricing (USD per million tokens), for /tokens."""
    try:
        profile = parts.configs.get(session.cwd).profile(session.provider)
    except ConfigError:
        return {"provider": session.provider, "pricing": None}
    pricing = dict(profile.pricing) if profile.pricing else None
    return {"provider": profile.name, "pricing": pricing}


HANDLERS: dict[str, Handler] = {
    m.INITIALIZE: initialize,
    m.DAEMON_STATUS: daemon_status,
    m.STATS_GET: stats_get,
    m.DAEMON_SHUTDOWN: daemon_shutdown,
}
