"""Bringing sessions back after the daemon restarts, crash included.

History comes back up to the last completed step. A turn that was running is
marked interrupted: every tool call it left without a result gets one saying
so, and the next submit continues from there. An approval that was pending is
never applied: it is recorded as expired and the model is told the call was
interrupted.
"""

from __future__ import annotations

import logging
from pathlib import Path

from coding_harness.protocol.methods import EventKind

from .agent.history import repair_dangling
from .seams import Usage
from .sessions import Event, Session, SessionTable
from .store import Store, StoredSession

log = logging.getLogger(__name__)

RESTART_NOTE = "interrupted: the daemon stopped before this call finished"
EXIT_INTERRUPTED = 130


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
    return session


def _recover(session: Session, stored: StoredSession, store: Store) -> None:
    repaired = repair_dangling(session.history, RESTART_NOTE)
    for request in store.unresolved_approvals(session.id):
        store.approval_resolved(session.id, request, "expired", "the daemon restarted", "harnessd")
    for turn in stored.running_turns:
        session.emit(
            EventKind.TURN_FINISHED,
            {
                "turn": turn,
                "exit_code": EXIT_INTERRUPTED,
                "reply": "(interrupted: the daemon stopped during this turn)",
                "usage": Usage().to_wire(),
                "cost_usd": None,
                "files_changed": [],
                "interrupted": True,
            },
        )
        store.turn_finished(session.id, turn, EXIT_INTERRUPTED, "interrupted")
    store.record_step(
        session.id, first_index=0, messages=session.history, events=session.take_pending_events()
    )
    log.info(
        "session %s: marked %d turn(s) interrupted, repaired %d call(s)",
        session.id,
        len(stored.running_turns),
        repaired,
    )
