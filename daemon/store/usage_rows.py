"""The store's usage rows: one per model call, with its tokens and what it cost.

A step's rows go in with the step's messages (`Store.record_step`, one
transaction); a call made outside a step (the turn-close notes) is recorded on
its own (`UsageRows.record`). Each row is filed under the local date it was
made (`usage_day`), which the daily spending limit and `daemon.usage` read.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from coding_harness.daemon.store.backlog import StoreWriter, Write

UsageValues = tuple[str, str, str, str, int, int, int, float | None, str, float]

INSERT_USAGE = (
    "INSERT INTO usage (session_id, turn, provider, model, prompt_tokens, cached_tokens,"
    " completion_tokens, cost_usd, day, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


@dataclass(kw_only=True, slots=True)
class UsageRow:
    turn: str
    provider: str
    model: str
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int
    cost_usd: float | None


def usage_day(at: float | None = None) -> str:
    """The `day` a usage row is filed under: the local date."""
    return time.strftime("%Y-%m-%d", time.localtime(time.time() if at is None else at))


def usage_values(sid: str, row: UsageRow, now: float) -> UsageValues:
    return (
        sid,
        row.turn,
        row.provider,
        row.model,
        row.prompt_tokens,
        row.cached_tokens,
        row.completion_tokens,
        row.cost_usd,
        usage_day(now),
        now,
    )


class UsageRows:
    """The usage table: rows written through the store's writer, and the sums read
    from it (what a session, a day or a provider has used and spent)."""

    def __init__(self, db: sqlite3.Connection, writer: StoreWriter) -> None:
        self._db = db
        self._writer = writer
        # Told the rows each `record` wrote (the store's observers, `Store.observe`).
        self.observer: Callable[[str, list[UsageValues]], None] | None = None

    def record(self, session_id: str, usage: list[UsageRow]) -> bool:
        """Add usage rows of a model call made outside a step (the turn-close notes)."""
        now = time.time()
        rows = [usage_values(session_id, row, now) for row in usage]
        done = self._writer.write(
            Write(apply=lambda db: db.executemany(INSERT_USAGE, rows), session=session_id)
        )
        if rows and self.observer is not None:
            self.observer(session_id, rows)
        return done

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

    def session_tokens(self, sid: str) -> tuple[int, int, int]:
        """A session's prompt, cached and completion tokens, all its calls together."""
        row = self._db.execute(
            "SELECT SUM(prompt_tokens), SUM(cached_tokens), SUM(completion_tokens) FROM usage"
            " WHERE session_id = ?",
            (sid,),
        ).fetchone()
        return (int(row[0] or 0), int(row[1] or 0), int(row[2] or 0))

    def session_cost(self, sid: str) -> float | None:
        """What a session's calls cost; None when one of them has no known cost."""
        row = self._db.execute(
            "SELECT SUM(cost_usd), COUNT(cost_usd), COUNT(*) FROM usage WHERE session_id = ?",
            (sid,),
        ).fetchone()
        return None if row[1] != row[2] else float(row[0] or 0.0)
