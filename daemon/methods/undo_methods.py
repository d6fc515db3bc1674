"""`session.undo` and `session.checkpoints`: putting back what the agent wrote.

The work is `turns/undo.py`'s over the store's checkpoints, run on the event loop
(it reads and writes the store, whose connection is the loop's; the files it puts
back are the few a span of turns wrote); here the request is
checked (the session exists and runs no turn, the caller is not a process the
agent's own tools started), the `undo` event goes to every client and the note
for the model's next turn is left.
"""

from __future__ import annotations

from typing import Any

from coding_harness.daemon.methods.lookup import session_of
from coding_harness.daemon.methods.params import flag, refuse_tool_children, text
from coding_harness.daemon.methods.parts import MethodParts
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.server.rpc import Handler
from coding_harness.daemon.turns.undo import NothingToUndo, undo
from coding_harness.protocol import errors
from coding_harness.protocol import methods as m
from coding_harness.protocol.methods import EventKind


async def session_undo(
    parts: MethodParts,
    conn: Connection,
    session: Any = None,
    turn: Any = None,
    force: Any = None,
) -> dict[str, Any]:
    refuse_tool_children(conn)
    target = session_of(parts, session)
    if target.state != "idle":
        raise errors.SessionBusy("a turn is running; cancel it or wait before undoing")
    asked = text("turn", turn, required=False)
    store = parts.store()
    try:  # on the event loop: the store's connection is the loop's alone
        result = undo(store.checkpoints, target.id, target.cwd, asked or None, flag("force", force))
    except NothingToUndo as exc:
        raise errors.InvalidParams(str(exc)) from None
    if result.restored:
        store.checkpoints.leave_note(target.id, result.note())
    target.emit(
        EventKind.UNDO,
        {"turn": result.turn, "restored": result.restored, "skipped": result.skipped},
    )
    return {
        "turn": result.turn,
        "restored": result.restored,
        "skipped": result.skipped,
        "diffs": result.diffs,
        "undo_turn": result.undo_turn,
    }


async def session_checkpoints(
    parts: MethodParts, conn: Connection, session: Any = None
) -> dict[str, Any]:
    target = session_of(parts, session)
    turns: dict[str, dict[str, Any]] = {}
    checkpoints = parts.store().checkpoints
    for row in checkpoints.of_session(target.id):
        entry = turns.setdefault(row.turn, {"turn": row.turn, "at": row.at, "files": []})
        entry["files"].append(row.path)
    return {
        "session": target.id,
        "checkpoints": list(turns.values()),
        "dropped": checkpoints.dropped(target.id),  # turns the store's cap dropped
    }


HANDLERS: dict[str, Handler] = {
    m.SESSION_UNDO: session_undo,
    m.SESSION_CHECKPOINTS: session_checkpoints,
}
