"""Bringing sessions back after the daemon restarts, crash included.

History comes back up to the last completed step. A turn that was running is
marked interrupted: every tool call it left without a result gets one saying
so, and what its file writes left on disk (`interrupted.py`): an edit is
reported written only if the file holds it, and a temporary file the crash
left behind is removed. The next submit continues from there. An approval
that was pending is never applied: it is recorded as expired and the model is
told the call was interrupted. `tell_store_problem` is how the store's
write problems reach a session's clients (wired in app.py).
"""

from __future__ import annotations

import logging
from pathlib import Path

from coding_harness.daemon.agent.seams import Usage
from coding_harness.daemon.sessions.events import Event, turn_finished
from coding_harness.daemon.sessions.session import Session, SessionTable
from coding_harness.daemon.store.db import Store
from coding_harness.daemon.store.stored_sessions import StoredSession
from coding_harness.daemon.turns.interrupted import recover_writes
from coding_harness.protocol import exit_codes
from coding_harness.protocol.methods import EventKind

log = logging.getLogger(__name__)

RESTART_NOTE = "interrupted: the daemon stopped before this call finished"


def restore_sessions(store: Store, table: SessionTable, event_limit: int) -> int:
    count = 0
    for stored in store.load_sessions(event_limit):
        session = _session_from(stored, store)
        table.add(session)
        if stored.running_turns:
            _recover(session, stored, store)
        count += 1
    return count


def _session_from(stored: StoredSession, store: Store) -> Session:
    prompt, cached, completion = stored.usage
    session = Session(
        id=stored.id,
        cwd=Path(stored.cwd),
        provider=stored.provider,
        model=stored.model,
        history=stored.messages,
        created_at=stored.created_at,
        last_activity=stored.last_activity,
        usage=Usage(prompt_tokens=prompt, cached_tokens=cached, completion_tokens=completion),
        cost_usd=stored.cost_usd,
        store=store,
        first_seq=stored.last_seq + 1,
    )
    session.events = [
        Event(seq=seq, kind=kind, data=data, at=at) for seq, kind, data, at in stored.events
    ]
    session.options.mode = stored.mode
    return session


def tell_store_problem(table: SessionTable, session_id: str, problem: str | None) -> bool:
    """Tell a session's clients its history is not being saved, or is again."""
    session = table.get(session_id)
    if session is None:
        return False
    if problem is None:
        session.emit(EventKind.NOTICE, {"message": "history saved again"})
    else:
        session.emit(EventKind.ERROR, {"message": f"history not saved: {problem}", "kind": "store"})
    return True


def _recover(session: Session, stored: StoredSession, store: Store) -> None:
    for request in store.unresolved_approvals(session.id):
        store.approval_resolved(session.id, request, "expired", "the daemon restarted", "harnessd")
    events = [(kind, data) for _, kind, data, _ in stored.events]
    for turn in stored.running_turns:
        changed = recover_writes(session.history, events, turn, session.cwd, RESTART_NOTE)
        reply = "(interrupted: the daemon stopped during this turn)"
        session.emit(
            EventKind.TURN_FINISHED,
            turn_finished(
                turn, exit_codes.INTERRUPTED, reply, files_changed=changed, interrupted=True
            ),
        )
        store.turn_finished(session.id, turn, exit_codes.INTERRUPTED, "interrupted")
    store.record_step(
        session.id, first_index=0, messages=session.history, events=session.take_pending_events()
    )
    log.info("session %s: marked %d turn(s) interrupted", session.id, len(stored.running_turns))
