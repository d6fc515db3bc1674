"""The `session.*` methods: create, list, attach, detach, submit, cancel, history."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coding_harness.protocol import errors
from coding_harness.protocol import methods as m

from ..config import ConfigError
from ..connection import Connection
from ..rpc import MethodTable
from ..sessions import Session, new_session_id
from .params import (
    env_map,
    optional_text,
    options_map,
    refuse_tool_children,
    refuse_when_stopping,
    text,
    workspace_folder,
)

if TYPE_CHECKING:
    from ..app import Daemon


def session_of(daemon: Daemon, session_id: Any) -> Session:
    session = daemon.sessions.get(text("session", session_id))
    if session is None:
        raise errors.SessionNotFound(f"no session {session_id!r}; `harness sessions` lists them")
    return session


def _since(value: Any) -> int | None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise errors.InvalidParams("since_seq must be an integer")
    return value


def register(table: MethodTable, daemon: Daemon) -> None:
    @table.register(m.SESSION_CREATE)
    async def session_create(
        conn: Connection,
        cwd: Any,
        provider: Any = None,
        model: Any = None,
        options: Any = None,
        env: Any = None,
    ) -> dict[str, Any]:
        refuse_when_stopping(daemon)
        options_map(options)
        session = Session(
            id=new_session_id(),
            cwd=workspace_folder(text("cwd", cwd)),
            provider=optional_text("provider", provider),
            model=optional_text("model", model),
            key_env=env_map(env),
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
        target = session_of(daemon, session)
        replay = target.attach(conn, _since(since_seq))
        for event in replay:
            conn.send(event.notification(target.id))
        return {**target.summary(), "replayed": len(replay)}

    @table.register(m.SESSION_DETACH)
    async def session_detach(conn: Connection, session: Any) -> dict[str, Any]:
        session_of(daemon, session).detach(conn)
        return {"detached": True}

    @table.register(m.SESSION_SUBMIT)
    async def session_submit(
        conn: Connection, session: Any, text: Any, options: Any = None, env: Any = None
    ) -> dict[str, Any]:
        refuse_tool_children(conn)
        refuse_when_stopping(daemon)
        target = session_of(daemon, session)
        opts = options_map(options)
        target.key_env.update(env_map(env))
        return daemon.turns.submit(
            target,
            _prompt(text),
            auto_approve=bool(opts.get("yes")),
            dry_run=bool(opts.get("dry_run")),
        )

    @table.register(m.SESSION_CANCEL)
    async def session_cancel(conn: Connection, session: Any) -> dict[str, Any]:
        return {"cancelled": daemon.turns.cancel(session_of(daemon, session))}

    @table.register(m.SESSION_HISTORY)
    async def session_history(conn: Connection, session: Any) -> dict[str, Any]:
        return {"messages": session_of(daemon, session).history}


def _prompt(value: Any) -> str:
    return text("text", value)
