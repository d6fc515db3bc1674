"""The JSON-RPC methods the daemon serves, bound to its state.

Each handler takes the calling `Connection` and the request's named params,
validates what jsonrpcserver's signature binding cannot (types, ranges), and
returns a JSON-ready result or raises an `RpcError`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coding_harness.protocol import errors
from coding_harness.protocol import methods as m
from coding_harness.protocol.version import PROTOCOL_VERSION, SUPPORTED_PROTOCOLS, __version__

from .config import ConfigError
from .connection import Connection
from .rpc import MethodTable
from .sessions import Session, new_session_id

if TYPE_CHECKING:
    from .app import Daemon


def _text(name: str, value: Any, *, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise errors.InvalidParams(f"{name} must be a non-empty string")
    return value


def _optional_text(name: str, value: Any) -> str | None:
    if value is None:
        return None
    return _text(name, value)


def _env(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise errors.InvalidParams("env must map variable names to strings")
    return dict(value)


def _options(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise errors.InvalidParams("options must be an object")
    return value


def _workspace_folder(cwd: str) -> Path:
    folder = Path(cwd)
    if not folder.is_absolute() or not folder.is_dir():
        raise errors.InvalidParams(f"cwd {cwd!r} must be an absolute path to an existing folder")
    return folder.resolve()


def _refuse_tool_children(conn: Connection) -> None:
    if conn.is_tool_descendant:
        raise errors.PeerRefused(
            "refused: this process was started by one of the agent's own tools"
        )


def _refuse_when_stopping(daemon: Daemon) -> None:
    if daemon.stopping:
        raise errors.ShuttingDown("the daemon is shutting down; run the command again")


def build_methods(daemon: Daemon) -> MethodTable:
    table = MethodTable()

    def session_of(session_id: Any) -> Session:
        session = daemon.sessions.get(_text("session", session_id))
        if session is None:
            raise errors.SessionNotFound(
                f"no session {session_id!r}; `harness sessions` lists them"
            )
        return session

    @table.register(m.INITIALIZE)
    async def initialize(
        conn: Connection, protocol: Any, client: Any = None, capabilities: Any = None
    ) -> dict[str, Any]:
        if conn.initialized:
            raise errors.AlreadyInitialized()
        if (
            not isinstance(protocol, int)
            or isinstance(protocol, bool)
            or protocol not in SUPPORTED_PROTOCOLS
        ):
            low, high = SUPPORTED_PROTOCOLS[0], SUPPORTED_PROTOCOLS[-1]
            raise errors.UnsupportedProtocol(
                f"protocol {protocol!r} is not supported; this daemon speaks {low}..{high}"
            )
        conn.initialized = True
        if isinstance(client, dict):
            conn.client_name = str(client.get("name", "unknown"))[:64]
        conn.can_approve = bool(isinstance(capabilities, dict) and capabilities.get("approvals"))
        return {
            "daemon": {"name": "harnessd", "version": __version__, "pid": os.getpid()},
            "protocol": PROTOCOL_VERSION,
            "client_id": conn.id,
            "key_env": daemon.configs.get(daemon.home).key_env_names(),
        }

    @table.register(m.DAEMON_STATUS)
    async def daemon_status(conn: Connection) -> dict[str, Any]:
        return daemon.status()

    @table.register(m.DAEMON_SHUTDOWN)
    async def daemon_shutdown(conn: Connection) -> dict[str, Any]:
        _refuse_tool_children(conn)
        conn.after_response(daemon.request_stop)
        return {"stopping": True}

    @table.register(m.SESSION_CREATE)
    async def session_create(
        conn: Connection,
        cwd: Any,
        provider: Any = None,
        model: Any = None,
        options: Any = None,
        env: Any = None,
    ) -> dict[str, Any]:
        _refuse_when_stopping(daemon)
        _options(options)
        folder = _workspace_folder(_text("cwd", cwd))
        session = Session(
            id=new_session_id(),
            cwd=folder,
            provider=_optional_text("provider", provider),
            model=_optional_text("model", model),
            key_env=_env(env),
        )
        config = daemon.configs.get(session.cwd)
        try:
            profile = config.profile(session.provider)
        except ConfigError as exc:
            raise errors.InvalidParams(str(exc)) from None
        daemon.sessions.add(session)
        return {
            "session": session.id,
            "cwd": str(session.cwd),
            "provider": profile.name,
            "model": session.model or profile.model,
            "endpoint": profile.endpoint,
            "key_env": config.key_env_names(),
            "config_problems": list(config.problems),
        }

    @table.register(m.SESSION_LIST)
    async def session_list(conn: Connection) -> dict[str, Any]:
        return {"sessions": [s.summary() for s in daemon.sessions.all()]}

    @table.register(m.SESSION_ATTACH)
    async def session_attach(
        conn: Connection, session: Any, since_seq: Any = None
    ) -> dict[str, Any]:
        target = session_of(session)
        if since_seq is not None and (
            not isinstance(since_seq, int) or isinstance(since_seq, bool)
        ):
            raise errors.InvalidParams("since_seq must be an integer")
        replay = target.attach(conn, since_seq)
        for event in replay:
            conn.send(event.notification(target.id))
        return {**target.summary(), "replayed": len(replay)}

    @table.register(m.SESSION_DETACH)
    async def session_detach(conn: Connection, session: Any) -> dict[str, Any]:
        session_of(session).detach(conn)
        return {"detached": True}

    @table.register(m.SESSION_SUBMIT)
    async def session_submit(
        conn: Connection, session: Any, text: Any, options: Any = None, env: Any = None
    ) -> dict[str, Any]:
        _refuse_tool_children(conn)
        _refuse_when_stopping(daemon)
        target = session_of(session)
        opts = _options(options)
        target.key_env.update(_env(env))
        return daemon.turns.submit(
            target,
            _text("text", text),
            auto_approve=bool(opts.get("yes")),
            dry_run=bool(opts.get("dry_run")),
        )

    @table.register(m.SESSION_CANCEL)
    async def session_cancel(conn: Connection, session: Any) -> dict[str, Any]:
        return {"cancelled": daemon.turns.cancel(session_of(session))}

    @table.register(m.SESSION_HISTORY)
    async def session_history(conn: Connection, session: Any) -> dict[str, Any]:
        return {"messages": session_of(session).history}

    @table.register(m.APPROVAL_RESPOND)
    async def approval_respond(
        conn: Connection, request: Any, decision: Any, reason: Any = None, session: Any = None
    ) -> dict[str, Any]:
        _refuse_tool_children(conn)
        if not conn.can_approve:
            raise errors.PeerRefused("this client did not announce capabilities.approvals")
        request_id = _text("request", request)
        candidates = [session_of(session)] if session is not None else daemon.sessions.all()
        owner = next((s for s in candidates if s.approvals.knows(request_id)), None)
        if owner is None:
            raise errors.ApprovalNotPending(f"no pending approval {request_id}")
        answer = owner.approvals.respond(
            request_id,
            _text("decision", decision),
            _text("reason", reason, required=False),
            conn.label,
        )
        return {"request": request_id, "decision": answer.decision, "at": time.time()}

    return table
