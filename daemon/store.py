"""The session store: SQLite (stdlib sqlite3, WAL) in the state folder.

Sessions, their messages, events, approvals, turns and token usage. Each write
is one transaction with what it describes: a step's messages go in with the
events and usage that came with them, so a crash at any point leaves either
the whole step or none of it. A database that cannot be opened or fails its
integrity check is moved aside and replaced by a fresh one, never crash-looped
on.
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

from .store_open import open_database, transaction

log = logging.getLogger(__name__)


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
    events: list[tuple[int, str, dict[str, Any], float]]
    usage: tuple[int, int, int]
    cost_usd: float | None
    running_turns: list[str]


@dataclass(kw_only=True, slots=True)
class UsageRow:
    turn: str
    provider: str
    model: str
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int
    cost_usd: float | None


class Store:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._db, self.notice = open_database(path)

    def close(self) -> None:
        self._db.close()

    # -- writes ----------------------------------------------------------
    def create_session(
        self, *, id: str, cwd: str, provider: str | None, model: str | None, created_at: float
    ) -> None:
        with transaction(self._db) as db:
            db.execute(
                "INSERT INTO sessions (id, cwd, provider, model, created_at, last_activity)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (id, cwd, provider, model, created_at, created_at),
            )

    def update_session(
        self, session_id: str, *, provider: str | None, model: str | None, closed: bool = False
    ) -> None:
        with transaction(self._db) as db:
            db.execute(
                "UPDATE sessions SET provider = ?, model = ?, closed = ? WHERE id = ?",
                (provider, model, int(closed), session_id),
            )

    def record_step(
        self,
        session_id: str,
        *,
        first_index: int,
        messages: list[dict[str, Any]],
        events: list[tuple[int, str, dict[str, Any], float]],
        usage: list[UsageRow] | None = None,
    ) -> None:
        """Replace messages from `first_index` on and add events and usage, atomically."""
        now = time.time()
        with transaction(self._db) as db:
            db.execute(
                "DELETE FROM messages WHERE session_id = ? AND idx >= ?", (session_id, first_index)
            )
            db.executemany(
                "INSERT INTO messages (session_id, idx, body) VALUES (?, ?, ?)",
                [(session_id, first_index + i, _dump(m)) for i, m in enumerate(messages)],
            )
            _insert_events(db, session_id, events)
            for row in usage or []:
                _insert_usage(db, session_id, row, now)
            db.execute("UPDATE sessions SET last_activity = ? WHERE id = ?", (now, session_id))

    def record_events(
        self, session_id: str, events: list[tuple[int, str, dict[str, Any], float]]
    ) -> None:
        with transaction(self._db) as db:
            _insert_events(db, session_id, events)

    def turn_started(self, session_id: str, turn: str, text: str) -> None:
        with transaction(self._db) as db:
            db.execute(
                "INSERT OR REPLACE INTO turns (id, session_id, text, state, started_at)"
                " VALUES (?, ?, ?, 'running', ?)",
                (turn, session_id, text, time.time()),
            )

    def turn_finished(
        self, session_id: str, turn: str, exit_code: int, state: str = "finished"
    ) -> None:
        with transaction(self._db) as db:
            db.execute(
                "UPDATE turns SET state = ?, exit_code = ?, finished_at = ?"
                " WHERE session_id = ? AND id = ?",
                (state, exit_code, time.time(), session_id, turn),
            )

    def approval_requested(self, session_id: str, request: str, kind: str, path: str) -> None:
        with transaction(self._db) as db:
            db.execute(
                "INSERT OR REPLACE INTO approvals (id, session_id, kind, path, requested_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (request, session_id, kind, path, time.time()),
            )

    def approval_resolved(
        self, session_id: str, request: str, decision: str, reason: str, client: str
    ) -> None:
        with transaction(self._db) as db:
            db.execute(
                "UPDATE approvals SET decision = ?, reason = ?, client = ?, resolved_at = ?"
                " WHERE session_id = ? AND id = ?",
                (decision, reason, client, time.time(), session_id, request),
            )

    def delete_sessions_before(self, cutoff: float) -> int:
        with transaction(self._db) as db:
            ids = [
                r[0]
                for r in db.execute("SELECT id FROM sessions WHERE last_activity < ?", (cutoff,))
            ]
            for table in ("messages", "events", "turns", "approvals"):
                db.executemany(f"DELETE FROM {table} WHERE session_id = ?", [(i,) for i in ids])
            db.executemany("DELETE FROM sessions WHERE id = ?", [(i,) for i in ids])
        return len(ids)

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
            )

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
        row = self._db.execute(
            "SELECT MAX(seq) FROM events WHERE session_id = ?", (sid,)
        ).fetchone()
        return int(row[0] or 0)

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


def usage_day(at: float | None = None) -> str:
    """The `day` a usage row is filed under: the local date, as `_insert_usage` writes it."""
    return time.strftime("%Y-%m-%d", time.localtime(time.time() if at is None else at))


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _insert_events(
    db: sqlite3.Connection, sid: str, events: list[tuple[int, str, dict[str, Any], float]]
) -> None:
    db.executemany(
        "INSERT OR IGNORE INTO events (session_id, seq, kind, data, at) VALUES (?, ?, ?, ?, ?)",
        [(sid, seq, kind, _dump(data), at) for seq, kind, data, at in events],
    )


def _insert_usage(db: sqlite3.Connection, sid: str, row: UsageRow, now: float) -> None:
    db.execute(
        "INSERT INTO usage (session_id, turn, provider, model, prompt_tokens, cached_tokens,"
        " completion_tokens, cost_usd, day, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            sid,
            row.turn,
            row.provider,
            row.model,
            row.prompt_tokens,
            row.cached_tokens,
            row.completion_tokens,
            row.cost_usd,
            time.strftime("%Y-%m-%d", time.localtime(now)),
            now,
        ),
    )
