"""The `session.*` methods: create, list, attach, detach, submit, cancel, history,
reset and close (`session.configure` is `configure_methods.py`'s).

`session.create` takes the permission mode in `options.mode` (else the config's
`agent.mode`); `session.list` rows and `session.attach` answers carry the mode in
force in `options.mode`. `session.attach` with `since_seq` replays in pages
(`replay.py`); `session.history` answers in pages (`history_pages.py`). A
session another runner of the hub holds is attached to, submitted to and
cancelled through the hub (`remote_attach.py`, `remote_sessions.py`). Each
handler takes the `MethodParts` first.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from coding_harness.daemon.agent.history import check_messages
from coding_harness.daemon.methods import remote_attach, remote_sessions
from coding_harness.daemon.methods.first_run import first_run_note, refresh
from coding_harness.daemon.methods.lookup import profile_of, session_of
from coding_harness.daemon.methods.params import (
    env_map,
    optional_text,
    options_map,
    refuse_tool_children,
    refuse_when_stopping,
    text,
    workspace_folder,
)
from coding_harness.daemon.methods.parts import MethodParts
from coding_harness.daemon.methods.session_admin import title_of
from coding_harness.daemon.methods.turn_start import start_turn
from coding_harness.daemon.methods.worktree_methods import (
    created_worktree,
    new_worktree,
    session_worktree,
)
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.server.rpc import Handler
from coding_harness.daemon.sessions.debug_log import DEBUG_SWITCHES
from coding_harness.daemon.sessions.history_pages import history_page
from coding_harness.daemon.sessions.replay import replay
from coding_harness.daemon.sessions.session import Session, new_session_id
from coding_harness.daemon.tools.edit.seen import forget_session
from coding_harness.daemon.turns.assemble import session_mode
from coding_harness.protocol import errors
from coding_harness.protocol import methods as m
from coding_harness.protocol.methods import EventKind
from coding_harness.protocol.modes import PERMISSION_MODES, mode_named

# `session.attach {session: "*"}`: every session, and every later one.
ALL_SESSIONS = "*"

log = logging.getLogger(__name__)


def _whole(name: str, value: Any, *, least: int | None = None) -> int:
    if (
        not isinstance(value, int)
        or isinstance(value, bool)
        or (least is not None and value < least)
    ):
        floor = "" if least is None else f" of at least {least}"
        raise errors.InvalidParams(f"{name} must be a whole number{floor}")
    return value


def _since(value: Any) -> int | None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise errors.InvalidParams("since_seq must be an integer")
    return value


async def session_create(
    parts: MethodParts,
    conn: Connection,
    cwd: Any,
    provider: Any = None,
    model: Any = None,
    options: Any = None,
    env: Any = None,
    worktree: Any = None,
) -> dict[str, Any]:
    refuse_when_stopping(parts.stopping)
    mode = permission_mode(options_map(options).get("mode"), "options.mode")
    session_id, folder = new_session_id(), workspace_folder(text("cwd", cwd))
    profile_name, model_id = optional_text("provider", provider), optional_text("model", model)
    keys = env_map(env)
    async with new_worktree(parts, folder, worktree, session_id) as made:
        session = Session(
            id=session_id,
            cwd=Path(made.record.path) if made else folder,
            provider=profile_name,
            model=model_id,
            key_env=keys,
            store=parts.store(),
        )
        created = await _create(parts, session, mode)
    return {**created, "worktree": created_worktree(made)} if made else created


async def _create(parts: MethodParts, session: Session, mode: str | None) -> dict[str, Any]:
    """The rest of `session.create` once the session's folder is known."""
    config = parts.configs.get(session.cwd)
    first_run: dict[str, Any] = {}
    if config.discoverable:  # no config file at all: look for what is around
        config, found = await refresh(parts.configs, session.cwd, session.key_env)
        first_run = first_run_note(config, found) if session.provider is None else {}
    profile = profile_of(config, session.provider)
    session.options.mode = mode or config.agent.mode
    if config.mcp_servers:
        parts.mcp.warm_up()  # the SDK loads while the first request is typed and sent
    _warm_index(parts, session.cwd)  # the code index builds meanwhile too
    _keep(parts, session)
    problems = parts.configs.unreported(config)
    if first_run.get("discovered"):
        session.emit(EventKind.NOTICE, {"message": first_run["notice"]})
    elif first_run:  # nothing found: the one line saying what was tried
        problems.append(first_run["notice"])
    return {
        "session": session.id,
        "cwd": str(session.cwd),
        "provider": profile.name,
        "model": session.model or profile.model,
        "endpoint": profile.endpoint,
        "key_env": config.key_env_names(),
        "config_problems": problems,
        "mode": session.options.mode,
        **first_run,
    }


def _warm_index(parts: MethodParts, cwd: Path) -> None:
    """Start the folder's code index building or refreshing, when the map is on (a
    failure here is the index's: logged, and the request goes on)."""
    index = parts.turns.index
    try:
        if index is not None and parts.configs.get(cwd).agent.repo_map_tokens > 0:
            index.warm(cwd)
    except Exception:
        log.exception("the code index of %s could not be warmed", cwd)


def permission_mode(value: Any, name: str = "mode") -> str | None:
    """A permission mode's name from a request (None when not given); -32602 naming
    the modes for anything else."""
    if value is None:
        return None
    mode = mode_named(value)
    if mode is None:
        raise errors.InvalidParams(f"{name} must be one of {', '.join(PERMISSION_MODES)}")
    return mode


def summary(parts: MethodParts, session: Session) -> dict[str, Any]:
    """The session's `session.list` row, with the mode in force (a session restored
    after a restart, which has none of its own, takes the config's `agent.mode`), its
    title (`session_admin.title_of`), and its state as clients see it (`activity.py`:
    `queued` while a request of its turn waits at the model's gate, `model_queue`
    `{model, ahead, limit}` saying where; `failed` when its last turn failed)."""
    if session.options.mode is None:
        session.options.mode = session_mode(session, parts.configs.get(session.cwd))
    row = session.summary()
    queue = parts.turns.gates.queued(session.id) if session.state == "running" else None
    row["state"] = session.activity.wire_state(session.state, queue is not None)
    worktree = session_worktree(session.id)
    return {**row, "title": title_of(session), "model_queue": queue, "worktree": worktree}


def _keep(parts: MethodParts, session: Session) -> None:
    """A new session joins the store and the table."""
    parts.store().create_session(
        id=session.id,
        cwd=str(session.cwd),
        provider=session.provider,
        model=session.model,
        created_at=session.created_at,
        mode=session.options.mode,
    )
    parts.sessions.add(session)


async def session_list(parts: MethodParts, conn: Connection) -> dict[str, Any]:
    return {"sessions": [summary(parts, s) for s in parts.sessions.all()]}


async def session_attach(
    parts: MethodParts, conn: Connection, session: Any, since_seq: Any = None
) -> dict[str, Any]:
    if session == ALL_SESSIONS:
        pending = parts.sessions.watch_all(conn)
        for owner, event in pending:
            conn.send_encoded(owner.framed(event))
        return {"session": ALL_SESSIONS, "sessions": len(parts.sessions)}
    try:
        target = session_of(parts, session)
    except errors.SessionNotFound:  # another runner's: followed through the hub
        if parts.hub() is None:
            raise
        return await remote_attach.attach(parts, conn, session, _since(since_seq))
    since = _since(since_seq)
    if since is None:
        approvals = target.attach(conn)
        for event in approvals:
            conn.send_encoded(target.framed(event))
        return {**summary(parts, target), "replayed": len(approvals), "missed": 0}
    done = await replay(target, conn, since)
    return {**summary(parts, target), "replayed": done.replayed, "missed": done.missed}


async def session_detach(parts: MethodParts, conn: Connection, session: Any) -> dict[str, Any]:
    try:
        target = session_of(parts, session)
    except errors.SessionNotFound:
        return remote_attach.detach(parts, conn, session)
    target.detach(conn)
    return {"detached": True}


async def session_submit(
    parts: MethodParts,
    conn: Connection,
    session: Any,
    text: Any,
    options: Any = None,
    env: Any = None,
) -> dict[str, Any]:
    refuse_tool_children(conn)
    refuse_when_stopping(parts.stopping)
    try:
        target = session_of(parts, session)
    except errors.SessionNotFound:  # another runner's, through the hub; else not found
        return await remote_sessions.submit(parts, session, _prompt(text), options_map(options))
    opts = options_map(options)
    target.key_env.update(env_map(env))
    submitted = start_turn(parts.turns, target, _prompt(text), opts, release=conn.on_answer)
    if not submitted["queued"]:  # refreshed while the turn starts, current for its map
        _warm_index(parts, target.cwd)
    return submitted


async def session_cancel(parts: MethodParts, conn: Connection, session: Any) -> dict[str, Any]:
    refuse_tool_children(conn)  # a recipe must not be able to stop the user's turn
    try:
        target = session_of(parts, session)
    except errors.SessionNotFound:
        return await remote_sessions.cancel(parts, session)
    return {"cancelled": parts.turns.cancel(target)}


async def session_history(
    parts: MethodParts,
    conn: Connection,
    session: Any,
    offset: Any = 0,
    limit: Any = None,
    text_offset: Any = 0,
) -> dict[str, Any]:
    return history_page(
        session_of(parts, session).history,
        offset=_whole("offset", offset),
        limit=None if limit is None else _whole("limit", limit, least=0),
        text_offset=_whole("text_offset", text_offset, least=0),
    )


def _prompt(value: Any) -> str:
    return text("text", value)


async def session_reset(
    parts: MethodParts, conn: Connection, session: Any, messages: Any = None
) -> dict[str, Any]:
    refuse_tool_children(conn)
    target = session_of(parts, session)
    if target.state != "idle":
        raise errors.SessionBusy("a turn is running; cancel it or wait before resetting")
    try:
        history = check_messages(messages) if messages is not None else []
    except ValueError as exc:
        raise errors.InvalidParams(f"history not loaded: {exc}") from None
    target.history = history
    forget_session(target.approvals)  # what the model had read is gone with the history
    said = (
        f"conversation replaced by {len(history)} loaded messages"
        if history
        else "conversation cleared"
    )
    target.emit(EventKind.NOTICE, {"message": said})
    parts.store().record_step(
        target.id, first_index=0, messages=history, events=target.take_pending_events()
    )
    return {"messages": len(history)}


async def session_close(parts: MethodParts, conn: Connection, session: Any) -> dict[str, Any]:
    refuse_tool_children(conn)
    target = session_of(parts, session)
    parts.turns.forget(target)
    parts.sessions.remove(target.id)
    DEBUG_SWITCHES.set(target.id, False)
    target.flush_events()
    parts.store().update_session(
        target.id, provider=target.provider, model=target.model, closed=True
    )
    return {"closed": True}


HANDLERS: dict[str, Handler] = {
    m.SESSION_CREATE: session_create,
    m.SESSION_LIST: session_list,
    m.SESSION_ATTACH: session_attach,
    m.SESSION_DETACH: session_detach,
    m.SESSION_SUBMIT: session_submit,
    m.SESSION_CANCEL: session_cancel,
    m.SESSION_HISTORY: session_history,
    m.SESSION_RESET: session_reset,
    m.SESSION_CLOSE: session_close,
}
