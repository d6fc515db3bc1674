"""What a follower reads of the hub: a session's row, its event rows, what it waits on.

The mirror of each runner writes its sessions and their numbered events into
the hub (`sessions`, `events`, whose `data` is the event's data as JSON text);
these queries read them back for a daemon that follows a session running
elsewhere. Rows are the truth: a reader asks for the rows above its cursor,
whatever woke it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from coding_harness.daemon.sessions.events import Event
from coding_harness.protocol.methods import EventKind

# Sessions a prefix may fit that a lookup reads at most (an ambiguity names a few).
LOOKUP_LIMIT = 6

SESSION_COLUMNS = (
    "id, runner, person, host, cwd, title, state, provider, model, created_at,"
    " last_activity, last_seq, cost_usd, closed"
)


@dataclass(kw_only=True, slots=True, frozen=True)
class HubSession:
    """A session's row in the hub: which runner holds it, whose it is, where."""

    id: str
    runner: str
    person: str
    host: str
    cwd: str
    title: str
    state: str
    provider: str | None
    model: str | None
    created_at: float
    last_activity: float
    last_seq: int
    cost_usd: float | None
    closed: bool


def _like(text: str) -> str:
    """`text` as a LIKE prefix pattern, its wildcards taken literally."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


async def sessions_named(db: Any, wanted: str, *, besides: str) -> list[HubSession]:
    """The hub's sessions of other runners than `besides` whose id or short id (the
    part after the last `-`) starts with `wanted`; the exact id first."""
    cursor = await db.execute(
        f"SELECT {SESSION_COLUMNS} FROM sessions WHERE runner <> %s"
        " AND (id LIKE %s OR regexp_replace(id, '^.*-', '') LIKE %s)"
        " ORDER BY (id = %s) DESC, created_at LIMIT %s",
        (besides, _like(wanted), _like(wanted), wanted, LOOKUP_LIMIT),
    )
    return [_session(row) for row in await cursor.fetchall()]


async def session_row(db: Any, session_id: str) -> HubSession | None:
    cursor = await db.execute(
        f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = %s", (session_id,)
    )
    row = await cursor.fetchone()
    return None if row is None else _session(row)


def _session(row: tuple[Any, ...]) -> HubSession:
    return HubSession(
        id=str(row[0]),
        runner=str(row[1]),
        person=str(row[2]),
        host=str(row[3]),
        cwd=str(row[4]),
        title=str(row[5] or ""),
        state=str(row[6] or "idle"),
        provider=row[7],
        model=row[8],
        created_at=float(row[9]),
        last_activity=float(row[10]),
        last_seq=int(row[11] or 0),
        cost_usd=None if row[12] is None else float(row[12]),
        closed=bool(row[13]),
    )


async def events_after(db: Any, session_id: str, seq: int, limit: int) -> list[Event]:
    """Up to `limit` event rows of the session numbered above `seq`, oldest first."""
    cursor = await db.execute(
        "SELECT seq, kind, data, at FROM events WHERE session_id = %s AND seq > %s"
        " ORDER BY seq LIMIT %s",
        (session_id, seq, limit),
    )
    return [_event(row) for row in await cursor.fetchall()]


def _event(row: tuple[Any, ...]) -> Event:
    try:
        data = json.loads(str(row[2]))
    except ValueError:
        data = {"unreadable": str(row[2])[:200]}
    if not isinstance(data, dict):
        data = {"value": data}
    return Event(seq=int(row[0]), kind=str(row[1]), data=data, at=float(row[3]))


@dataclass(kw_only=True, slots=True, frozen=True)
class Progress:
    """Where the session's events stand: the last seq, the running turn's start."""

    last_seq: int
    turn_seq: int | None  # the running turn's `turn.started`; None when none runs
    last_turn_seq: int | None


async def progress(db: Any, session_id: str) -> Progress:
    cursor = await db.execute(
        "SELECT max(seq), max(seq) FILTER (WHERE kind = %s), max(seq) FILTER (WHERE kind = %s)"
        " FROM events WHERE session_id = %s",
        (EventKind.TURN_STARTED, EventKind.TURN_FINISHED, session_id),
    )
    row = await cursor.fetchone()
    last, started, finished = (None, None, None) if row is None else row
    begun = None if started is None else int(started)
    ended = None if finished is None else int(finished)
    running = begun is not None and (ended is None or ended < begun)
    return Progress(
        last_seq=int(last or 0), turn_seq=begun if running else None, last_turn_seq=begun
    )


async def pending_approvals(db: Any, session_id: str, turn_seq: int | None) -> list[Event]:
    """The running turn's approval requests that no `approval.resolved` answered yet."""
    if turn_seq is None:
        return []
    asked = await db.execute(
        "SELECT seq, kind, data, at FROM events WHERE session_id = %s AND seq > %s"
        " AND kind IN (%s, %s) ORDER BY seq",
        (session_id, turn_seq, EventKind.APPROVAL_REQUESTED, EventKind.APPROVAL_RESOLVED),
    )
    events = [_event(row) for row in await asked.fetchall()]
    answered = {e.data.get("request") for e in events if e.kind == EventKind.APPROVAL_RESOLVED}
    return [
        e
        for e in events
        if e.kind == EventKind.APPROVAL_REQUESTED and e.data.get("request") not in answered
    ]
