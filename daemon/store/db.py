"""The session store: SQLite (stdlib sqlite3, WAL) in the state folder.

Sessions, their messages, events, approvals, turns and token usage. Each write
is one transaction with what it describes: a step's messages go in with the
events and usage that came with them, so a crash at any point leaves either
the whole step or none of it. A write the disk refuses (full, say) is rolled
back and kept for the next (`backlog.py`), so the daemon keeps serving.
Opening, and a damaged file, are `open_db.py`'s; rows, `rows.py`'s;
the project notes table, `notes.py`'s.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coding_harness.daemon.context.notes_curator import Note, Redact
from coding_harness.daemon.store.backlog import Listener, StoreWriter, Write
from coding_harness.daemon.store.checkpoints import CAP_BYTES, CheckpointStore
from coding_harness.daemon.store.notes import add_notes, migrate_notes, read_notes, remove_notes
from coding_harness.daemon.store.open_db import open_database
from coding_harness.daemon.store.rows import (
    INSERT_USAGE,
    StoredEvent,
    UsageRow,
    dump,
    event_rows,
    events_size,
    insert_events,
    storable,
    usage_day,
    usage_values,
)

__all__ = ["Store", "StoredSession", "UsageRow", "usage_day"]

log = logging.getLogger(__name__)


_NEW_SESSION = (
    "INSERT INTO sessions (id, cwd, provider, model, created_at, last_activity)"
    " VALUES (?, ?, ?, ?, ?, ?)"
)
_SET_MODE = "INSERT OR REPLACE INTO session_modes (session_id, mode) VALUES (?, ?)"


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


class Store:
    """The session store. Writes never raise for the disk's sake: they return (or
    swallow) False, and the listener hears which sessions' history is not saved."""

    def __init__(self, path: Path, *, checkpoint_cap: int = CAP_BYTES) -> None:
        self.path = path
        self._db, self.notice = open_database(path)
        migrate_notes(self._db)
        self._writer = StoreWriter(self._db, path.parent)
        self.checkpoints = CheckpointStore(
            self._db, path.parent / "checkpoints", cap_bytes=checkpoint_cap
        )

    @property
    def problem(self) -> str | None:
        """Why writes fail now, or None while they work."""
        return self._writer.problem

    def listen(self, listener: Listener) -> None:
        """Have `listener` told which sessions' history is not saved, and when it is again."""
        self._writer.listener = listener

    def retry(self) -> bool:
        """Try now to write what the disk refused before; True when nothing is left."""
        return self._writer.retry()

    def close(self) -> None:
        """Close the database, after one last try at what could not be written."""
        self._writer.stop()
        self._writer.retry()
        self._db.close()

    # -- writes ----------------------------------------------------------
    def create_session(
        self,
        *,
        id: str,
        cwd: str,
        provider: str | None,
        model: str | None,
        created_at: float,
        mode: str | None = None,
    ) -> None:
        """A new session, and its permission mode when it has one (one transaction)."""
        row = (id, storable(cwd), provider, model, created_at, created_at)
        writes = [Write(apply=lambda db: db.execute(_NEW_SESSION, row), session=id)]
        if mode is not None:
            writes.append(Write(apply=lambda db: db.execute(_SET_MODE, (id, mode)), session=id))
        self._writer.write(*writes)

    def set_mode(self, session_id: str, mode: str) -> None:
        """Keep the session's permission mode across restarts."""
        self._execute(session_id, _SET_MODE, (session_id, mode))

    def update_session(
        self, session_id: str, *, provider: str | None, model: str | None, closed: bool = False
    ) -> None:
        self._execute(
            session_id,
            "UPDATE sessions SET provider = ?, model = ?, closed = ? WHERE id = ?",
            (provider, model, int(closed), session_id),
        )

    def record_step(
        self,
        session_id: str,
        *,
        first_index: int,
        messages: list[dict[str, Any]],
        events: list[StoredEvent],
        usage: list[UsageRow] | None = None,
    ) -> bool:
        """Replace messages from `first_index` on and add events and usage, atomically.

        False when the disk refused it (it is kept and replayed with the next write)."""
        now = time.time()
        rows = [(session_id, first_index + i, dump(m)) for i, m in enumerate(messages)]
        extra_events = event_rows(session_id, events)
        usage_rows = [usage_values(session_id, row, now) for row in usage or []]

        def apply(db: sqlite3.Connection) -> None:
            db.execute(
                "DELETE FROM messages WHERE session_id = ? AND idx >= ?", (session_id, first_index)
            )
            db.executemany("INSERT INTO messages (session_id, idx, body) VALUES (?, ?, ?)", rows)
            db.execute("UPDATE sessions SET last_activity = ? WHERE id = ?", (now, session_id))

        def apply_extras(db: sqlite3.Connection) -> None:
            insert_events(db, extra_events)
            db.executemany(INSERT_USAGE, usage_rows)

        # Kept apart, so a later history write that replaces this one keeps them.
        extras = Write(apply=apply_extras, session=session_id, size=events_size(extra_events))
        step = Write(
            apply=apply,
            session=session_id,
            size=sum(len(r[2]) for r in rows),
            messages_from=first_index,
        )
        return self._writer.write(*([extras] if extra_events or usage_rows else []), step)

    def record_events(self, session_id: str, events: list[StoredEvent]) -> bool:
        rows = event_rows(session_id, events)
        return self._writer.write(
            Write(
                apply=lambda db: insert_events(db, rows),
                session=session_id,
                size=events_size(rows),
                droppable=True,
            )
        )

    def turn_started(self, session_id: str, turn: str, text: str) -> None:
        self._execute(
            session_id,
            "INSERT OR REPLACE INTO turns (id, session_id, text, state, started_at)"
            " VALUES (?, ?, ?, 'running', ?)",
            (turn, session_id, storable(text), time.time()),
        )

    def turn_finished(
        self, session_id: str, turn: str, exit_code: int, state: str = "finished"
    ) -> None:
        self._execute(
            session_id,
            "UPDATE turns SET state = ?, exit_code = ?, finished_at = ?"
            " WHERE session_id = ? AND id = ?",
            (state, exit_code, time.time(), session_id, turn),
        )

    def approval_requested(self, session_id: str, request: str, kind: str, path: str) -> None:
        self._execute(
            session_id,
            "INSERT OR REPLACE INTO approvals (id, session_id, kind, path, requested_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (request, session_id, kind, storable(path), time.time()),
        )

    def approval_resolved(
        self, session_id: str, request: str, decision: str, reason: str, client: str
    ) -> None:
        self._execute(
            session_id,
            "UPDATE approvals SET decision = ?, reason = ?, client = ?, resolved_at = ?"
            " WHERE session_id = ? AND id = ?",
            (decision, storable(reason), storable(client), time.time(), session_id, request),
        )

    def record_usage(self, session_id: str, usage: list[UsageRow]) -> bool:
        """Add usage rows of a model call made outside a step (the turn-close notes)."""
        now = time.time()
        rows = [usage_values(session_id, row, now) for row in usage]
        return self._writer.write(
            Write(apply=lambda db: db.executemany(INSERT_USAGE, rows), session=session_id)
        )

    # -- project notes (notes.py) ------------------------------------
    def project_notes(self, project: str) -> list[Note]:
        """The notes kept for a project (the workspace's real path), oldest first."""
        return read_notes(self._db, project)

    def add_project_notes(
        self, project: str, notes: list[tuple[str, str]], redact: Redact | None = None
    ) -> bool:
        """Keep (kind, text) notes for a project, curated: cleaned, deduplicated, capped."""
        now = time.time()
        return self._writer.write(
            Write(apply=lambda db: add_notes(db, project, notes, redact, now))
        )

    def remove_project_notes(self, project: str, ids: list[int] | None) -> bool:
        """Remove a project's notes by id; all of them with None."""
        return self._writer.write(Write(apply=lambda db: remove_notes(db, project, ids)))

    def delete_sessions_before(self, cutoff: float) -> int:
        ids = [
            (r[0],)
            for r in self._db.execute("SELECT id FROM sessions WHERE last_activity < ?", (cutoff,))
        ]

        def apply(db: sqlite3.Connection) -> None:
            for table in ("messages", "events", "turns", "approvals", "seq_marks", "session_modes"):
                db.executemany(f"DELETE FROM {table} WHERE session_id = ?", ids)
            db.executemany("DELETE FROM sessions WHERE id = ?", ids)

        if not ids or not self._writer.write(Write(apply=apply)):
            return 0
        self.checkpoints.forget_sessions([i for (i,) in ids])
        return len(ids)

    def reserve_seq(self, session_id: str, upto: int) -> None:
        """Record that the session may number events up to `upto` before this is
        written again; a restart numbers past it, so no `seq` is ever used twice."""
        self._execute(
            session_id,
            "INSERT OR REPLACE INTO seq_marks (session_id, reserved) VALUES (?, ?)",
            (session_id, upto),
        )

    def _execute(self, session_id: str, sql: str, row: tuple[Any, ...]) -> None:
        self._writer.write(Write(apply=lambda db: db.execute(sql, row), session=session_id))

    # -- reads -----------------------------------------------------------
    def load_sessions(self, event_limit: int) -> Iterator[StoredSession]:
        rows = self._db.execute(
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
                messages=self._messages(sid),
                last_seq=self._last_seq(sid),
                events=self._events(sid, event_limit),
                usage=self._usage_totals(sid),
                cost_usd=self._cost(sid),
                running_turns=[
                    r[0]
                    for r in self._db.execute(
                        "SELECT id FROM turns WHERE session_id = ?"
                        " AND state IN ('running', 'queued')",
                        (sid,),
                    )
                ],
                mode=self._mode(sid),
            )

    def _mode(self, sid: str) -> str | None:
        row = self._db.execute(
            "SELECT mode FROM session_modes WHERE session_id = ?", (sid,)
        ).fetchone()
        return str(row[0]) if row else None

    def unresolved_approvals(self, session_id: str) -> list[str]:
        return [
            r[0]
            for r in self._db.execute(
                "SELECT id FROM approvals WHERE session_id = ? AND decision IS NULL", (session_id,)
            )
        ]

    def totals_by_provider_day(self) -> list[dict[str, Any]]:
        rows = self._db.execute(
            "SELECT day, provider, SUM(prompt_tokens), SUM(cached_tokens),"
            " SUM(completion_tokens), SUM(cost_usd), COUNT(cost_usd), COUNT(*)"
            " FROM usage GROUP BY day, provider ORDER BY day"
        ).fetchall()
        return [
            {
                "day": d,
                "provider": p,
                "prompt_tokens": pt,
                "cached_tokens": ct,
                "completion_tokens": co,
                "cost_usd": cost if known == n else None,
            }
            for d, p, pt, ct, co, cost, known, n in rows
        ]

    def spent_today_usd(
        self, *, day: str | None = None, except_turn: tuple[str, str] | None = None
    ) -> float:
        """Known cost of the model calls recorded on `day` (local date, default today),
        every session together; calls of unknown cost count as nothing. `except_turn`
        (session id, turn id) leaves one turn's rows out, for a turn that counts its own."""
        sid, turn = except_turn or ("", "")
        row = self._db.execute(
            "SELECT SUM(cost_usd) FROM usage WHERE day = ? AND NOT (session_id = ? AND turn = ?)",
            (day or usage_day(), sid, turn),
        ).fetchone()
        return float(row[0] or 0.0)

    def spent_session_usd(self, session_id: str, *, except_turn: str | None = None) -> float:
        """Known cost of one session's recorded model calls, optionally without one turn."""
        row = self._db.execute(
            "SELECT SUM(cost_usd) FROM usage WHERE session_id = ? AND turn != ?",
            (session_id, except_turn or ""),
        ).fetchone()
        return float(row[0] or 0.0)

    def integrity(self) -> str:
        return str(self._db.execute("PRAGMA integrity_check").fetchone()[0])

    def _messages(self, sid: str) -> list[dict[str, Any]]:
        return [
            json.loads(r[0])
            for r in self._db.execute(
                "SELECT body FROM messages WHERE session_id = ? ORDER BY idx", (sid,)
            )
        ]

    def _last_seq(self, sid: str) -> int:
        """The highest seq the session may have sent: its last stored event, or the
        reservation past it (events emitted just before a crash were never stored)."""
        row = self._db.execute(
            "SELECT MAX(seq) FROM events WHERE session_id = ?", (sid,)
        ).fetchone()
        mark = self._db.execute(
            "SELECT reserved FROM seq_marks WHERE session_id = ?", (sid,)
        ).fetchone()
        return max(int(row[0] or 0), int(mark[0]) if mark else 0)

    def events_between(
        self, sid: str, after_seq: int, before_seq: int, limit: int
    ) -> list[tuple[int, str, dict[str, Any], float]]:
        """Up to `limit` stored events numbered strictly between the two, oldest first
        (replay of what the in-memory log no longer holds)."""
        rows = self._db.execute(
            "SELECT seq, kind, data, at FROM events WHERE session_id = ? AND seq > ? AND seq < ?"
            " ORDER BY seq LIMIT ?",
            (sid, after_seq, before_seq, limit),
        ).fetchall()
        return [(seq, kind, json.loads(data), at) for seq, kind, data, at in rows]

    def _events(self, sid: str, limit: int) -> list[tuple[int, str, dict[str, Any], float]]:
        rows = self._db.execute(
            "SELECT seq, kind, data, at FROM events WHERE session_id = ? ORDER BY seq DESC LIMIT ?",
            (sid, limit),
        ).fetchall()
        return [(seq, kind, json.loads(data), at) for seq, kind, data, at in reversed(rows)]

    def _usage_totals(self, sid: str) -> tuple[int, int, int]:
        row = self._db.execute(
            "SELECT SUM(prompt_tokens), SUM(cached_tokens), SUM(completion_tokens) FROM usage"
            " WHERE session_id = ?",
            (sid,),
        ).fetchone()
        return (int(row[0] or 0), int(row[1] or 0), int(row[2] or 0))

    def _cost(self, sid: str) -> float | None:
        row = self._db.execute(
            "SELECT SUM(cost_usd), COUNT(cost_usd), COUNT(*) FROM usage WHERE session_id = ?",
            (sid,),
        ).fetchone()
        return None if row[1] != row[2] else float(row[0] or 0.0)
