"""Keeping the session list tidy and adding to a conversation from outside a turn:
`session.remove`, `session.prune` and `session.append`, and each session's title.

`session.remove {sessions: [id, ...]}` forgets sessions for good (table, store,
checkpoints); a session that runs a turn or waits for an approval is refused,
with why. `session.prune {days}` removes the idle sessions nobody used for
`days` days, and the closed ones kept in the store. `session.append {session,
text}` adds what the user did themselves (the REPL's `!cmd` and its output) to
the history as a user message and a short assistant acknowledgement, so the
roles keep alternating for the servers that insist on it. A session's title is
its first task, on one line (`title_of`).
"""

from __future__ import annotations

import time
from typing import Any

from coding_harness.daemon.methods import params
from coding_harness.daemon.methods.lookup import session_of
from coding_harness.daemon.methods.params import refuse_tool_children
from coding_harness.daemon.methods.parts import MethodParts
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.server.rpc import Handler
from coding_harness.daemon.sessions.debug_log import DEBUG_SWITCHES
from coding_harness.daemon.sessions.session import Session
from coding_harness.protocol import errors
from coding_harness.protocol import methods as m
from coding_harness.protocol.methods import EventKind

DAY_SECONDS = 86400.0
MAX_REMOVE = 1000
ACKNOWLEDGED = "Noted: I have that output in front of me."


def title_of(session: Session) -> str:
    """The session's first task on one line, cut to TITLE_CHARS ("" before any)."""
    return session.title


async def session_remove(parts: MethodParts, conn: Connection, sessions: Any) -> dict[str, Any]:
    refuse_tool_children(conn)
    if (
        not isinstance(sessions, list)
        or not sessions
        or len(sessions) > MAX_REMOVE
        or not all(isinstance(s, str) and s for s in sessions)
    ):
        raise errors.InvalidParams(f"sessions must be a list of 1 to {MAX_REMOVE} session ids")
    removed: list[str] = []
    refused: list[dict[str, str]] = []
    for wanted in sessions:
        try:
            target = session_of(parts, wanted)
        except errors.RpcError as exc:
            refused.append({"session": wanted, "reason": exc.message})
            continue
        if target.state != "idle":
            reason = f"it is {target.state}; cancel its turn or wait, then remove it"
            refused.append({"session": target.id, "reason": reason})
            continue
        if target.id not in removed:
            _forget(parts, target)
            removed.append(target.id)
    parts.store().delete_sessions(removed)
    return {"removed": removed, "refused": refused}


async def session_prune(parts: MethodParts, conn: Connection, days: Any) -> dict[str, Any]:
    refuse_tool_children(conn)
    if not isinstance(days, int | float) or isinstance(days, bool) or days < 0:
        raise errors.InvalidParams("days must be a number of days, 0 or more")
    cutoff = time.time() - float(days) * DAY_SECONDS
    old = [s for s in parts.sessions.all() if s.state == "idle" and s.last_activity < cutoff]
    for target in old:
        _forget(parts, target)
    store = parts.store()
    closed = store.closed_sessions_before(cutoff)
    removed = [s.id for s in old]
    store.delete_sessions([*removed, *closed])
    return {"removed": removed, "closed_removed": len(closed)}


def _forget(parts: MethodParts, target: Session) -> None:
    target.emit(EventKind.NOTICE, {"message": "this session was removed (harness sessions rm)"})
    parts.turns.forget(target)
    parts.sessions.remove(target.id)
    DEBUG_SWITCHES.set(target.id, False)
    target.pending_events.clear()  # its rows are about to go


async def session_append(
    parts: MethodParts, conn: Connection, session: Any, text: Any
) -> dict[str, Any]:
    refuse_tool_children(conn)
    target = session_of(parts, session)
    said = params.text("text", text)
    if target.state != "idle":
        raise errors.SessionBusy("a turn is running; wait for it before adding to the conversation")
    first = len(target.history)
    added = [{"role": "user", "content": said}, {"role": "assistant", "content": ACKNOWLEDGED}]
    target.history.extend(added)
    target.last_activity = time.time()
    parts.store().record_step(
        target.id, first_index=first, messages=added, events=target.take_pending_events()
    )
    return {"messages": len(target.history)}


HANDLERS: dict[str, Handler] = {
    m.SESSION_REMOVE: session_remove,
    m.SESSION_PRUNE: session_prune,
    m.SESSION_APPEND: session_append,
}
