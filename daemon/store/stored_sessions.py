"""Reading sessions back from the store: `StoredSession` and the queries behind it.

At start the daemon restores each open session from its rows (`restore.py`):
its messages, its last events and the highest `seq` it may have sent, its
usage and cost, the turns a crash left running, its permission mode. Replay
reads older events page by page (`events_between`). Reads go straight to the
database; the writes are `db.py`'s.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from coding_harness.daemon.store.rows import StoredEvent
from coding_harness.daemon.store.usage_rows import UsageRows


@dataclass(kw_only=True, slots=True)
class StoredSession:
    id: str
    cwd: str
    provider: str | None
    model: str | None
    created_at: float
    last_activity: float
    messages: list[dict[str, Any]]
    last_seq: int
    events: list[StoredEvent]
    usage: tuple[int, int, int]
    cost_usd: float | None
    running_turns: list[str]
    mode: str | None = None  # the permission mode last set; None: never set


def read_sessions(
    db: sqlite3.Connection, usage: UsageRows, event_limit: int
) -> Iterator[StoredSession]:
    """Every session not closed, oldest first, with at most `event_limit` recent events."""
    rows = db.execute(
        "SELECT id, cwd, provider, model, created_at, last_activity FROM sessions"
        " WHERE closed = 0 ORDER BY created_at"
    ).fetchall()
    for sid, cwd, provider, model, created, active in rows:
        yield StoredSession(
            id=sid,
            cwd=cwd,
            provider=provider,
            model=model,
            created_at=created,
            last_activity=active,
            messages=_messages(db, sid),
            last_seq=_last_seq(db, sid),
            events=_events(db, sid, event_limit),
            usage=usage.session_tokens(sid),
            cost_usd=usage.session_cost(sid),
            running_turns=[
                r[0]
                for r in db.execute(
                    "SELECT id FROM turns WHERE session_id = ? AND state IN ('running', 'queued')",
                    (sid,),
                )
            ],
            mode=_mode(db, sid),
        )


def unresolved_approvals(db: sqlite3.Connection, session_id: str) -> list[str]:
    return [
        r[0]
        for r in db.execute(
            "SELECT id FROM approvals WHERE session_id = ? AND decision IS NULL", (session_id,)
        )
    ]


def events_between(
    db: sqlite3.Connection, sid: str, after_seq: int, before_seq: int, limit: int
) -> list[StoredEvent]:
    """Up to `limit` stored events numbered strictly between the two, oldest first
    (replay of what the in-memory log no longer holds)."""
    rows = db.execute(
        "SELECT seq, kind, data, at FROM events WHERE session_id = ? AND seq > ? AND seq < ?"
        " ORDER BY seq LIMIT ?",
        (sid, after_seq, before_seq, limit),
    ).fetchall()
    return [(seq, kind, json.loads(data), at) for seq, kind, data, at in rows]


def _mode(db: sqlite3.Connection, sid: str) -> str | None:
    row = db.execute("SELECT mode FROM session_modes WHERE session_id = ?", (sid,)).fetchone()
    return str(row[0]) if row else None


def _messages(db: sqlite3.Connection, sid: str) -> list[dict[str, Any]]:
    return [
        json.loads(r[0])
        for r in db.execute("SELECT body FROM messages WHERE session_id = ? ORDER BY idx", (sid,))
    ]


def _last_seq(db: sqlite3.Connection, sid: str) -> int:
    """The highest seq the session may have sent: its last stored event, or the
    reservation past it (events emitted just before a crash were never stored)."""
    row = db.execute("SELECT MAX(seq) FROM events WHERE session_id = ?", (sid,)).fetchone()
    mark = db.execute("SELECT reserved FROM seq_marks WHERE session_id = ?", (sid,)).fetchone()
    return max(int(row[0] or 0), int(mark[0]) if mark else 0)


def _events(db: sqlite3.Connection, sid: str, limit: int) -> list[StoredEvent]:
    rows = db.execute(
        "SELECT seq, kind, data, at FROM events WHERE session_id = ? ORDER BY seq DESC LIMIT ?",
        (sid, limit),
    ).fetchall()
    return [(seq, kind, json.loads(data), at) for seq, kind, data, at in reversed(rows)]
