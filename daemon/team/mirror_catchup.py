"""The catch-up: what the hub lacks of this runner's sessions, read from the local store.

After every (re)connection, and for the sessions whose queued operations were
dropped (`MirrorQueue.behind`), the mirror compares each local session's last
stored event with the hub's `last_seq` for it (`lagging`) and copies what the
hub lacks (`session_ops`): the session's row, its turns, approvals and usage
rows (upserts and fixed ids: copying them again changes nothing), then its
events after the hub's `last_seq`, oldest first, in pages. The reads are quick
SQLite queries on the daemon's thread (the store's own connection); the writes
are `mirror_sql.py`'s.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from coding_harness.daemon.sessions.titles import title_of
from coding_harness.daemon.team.mirror_queue import EVENTS, Op, op_size

# Events per operation (and so per transaction) when catching up.
PAGE = 2000


def local_heads(db: sqlite3.Connection) -> dict[str, int]:
    """Each local session and the seq of its last stored event (0 when it has none)."""
    rows = db.execute(
        "SELECT s.id, (SELECT MAX(seq) FROM events e WHERE e.session_id = s.id) FROM sessions s"
    ).fetchall()
    return {str(sid): int(seq or 0) for sid, seq in rows}


def lagging(local: dict[str, int], hub: dict[str, int], also: set[str]) -> dict[str, int]:
    """The sessions to copy and the hub's last seq of each: those the hub lacks, those
    whose last stored event is past the hub's, and `also` (dropped from the queue)."""
    todo: dict[str, int] = {}
    for sid, last in local.items():
        if sid not in hub or hub[sid] < last or sid in also:
            todo[sid] = hub.get(sid, 0)
    return todo


def session_ops(db: sqlite3.Connection, sid: str, after_seq: int) -> Iterator[Op]:
    """The operations that bring the hub's copy of `sid` up to the store's."""
    row = db.execute(
        "SELECT cwd, provider, model, created_at, last_activity, closed FROM sessions WHERE id = ?",
        (sid,),
    ).fetchone()
    if row is None:
        return
    cwd, provider, model, created, active, closed = row
    first = db.execute(
        "SELECT text FROM turns WHERE session_id = ? ORDER BY started_at LIMIT 1", (sid,)
    ).fetchone()
    values = {
        "cwd": cwd,
        "title": title_of([], first[0] if first else ""),
        "provider": provider,
        "model": model,
        "at": created,
        "last_activity": active,
        "closed": bool(closed),
    }
    yield Op("stored_session", sid, values)
    for turn, text, state, code, started, finished in db.execute(
        "SELECT id, text, state, exit_code, started_at, finished_at FROM turns"
        " WHERE session_id = ? ORDER BY started_at",
        (sid,),
    ):
        turn_values = {"turn": turn, "text": text, "state": state, "exit_code": code}
        yield Op("turn_row", sid, {**turn_values, "at": started, "end": finished})
    for approval in db.execute(
        "SELECT id, kind, path, requested_at, decision, reason, client, client, resolved_at"
        " FROM approvals WHERE session_id = ? ORDER BY requested_at",
        (sid,),
    ):
        yield Op("approval_row", sid, {"id": approval[0], "row": tuple(approval[1:])})
    yield from _usage_ops(db, sid)
    yield from _event_ops(db, sid, after_seq)


def _usage_ops(db: sqlite3.Connection, sid: str) -> Iterator[Op]:
    """The usage rows, grouped as they were written (same turn and time) so that each
    keeps the id the queue gave it (`mirror_sql.usage_id`)."""
    groups: dict[tuple[str, float], list[tuple[object, ...]]] = {}
    for row in db.execute(
        "SELECT session_id, turn, provider, model, prompt_tokens, cached_tokens,"
        " completion_tokens, cost_usd, day, at FROM usage WHERE session_id = ? ORDER BY rowid",
        (sid,),
    ):
        groups.setdefault((str(row[1]), float(row[9])), []).append(tuple(row))
    for rows in groups.values():
        yield Op("usage", sid, {"rows": rows})


def _event_ops(db: sqlite3.Connection, sid: str, after_seq: int) -> Iterator[Op]:
    last = after_seq
    while True:
        rows = db.execute(
            "SELECT session_id, seq, kind, data, at FROM events WHERE session_id = ? AND seq > ?"
            " ORDER BY seq LIMIT ?",
            (sid, last, PAGE),
        ).fetchall()
        if not rows:
            return
        values = {"rows": [tuple(r) for r in rows]}
        yield Op(EVENTS, sid, values, op_size(EVENTS, values))
        last = int(rows[-1][1])
