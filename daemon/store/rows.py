"""How the store's records become rows: JSON and text columns, events.

Text the daemon holds may contain a lone surrogate (JSON allows `\\ud800`,
UTF-8 does not), which SQLite cannot take; here it is escaped inside JSON and
replaced in plain text columns, so no write ever fails for it. Usage rows are
`usage_rows.py`'s.
"""

from __future__ import annotations

import json
import re
import sqlite3
from typing import Any

EventRow = tuple[str, int, str, str, float]
StoredEvent = tuple[int, str, dict[str, Any], float]

_SURROGATE = re.compile("[\ud800-\udfff]")


def dump(value: Any) -> str:
    """JSON for a column; a lone surrogate (which UTF-8 cannot hold) stays escaped."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":"))
    return text


def storable(value: str) -> str:
    """A text column's value, with any lone surrogate replaced by U+FFFD."""
    if value.isascii():
        return value
    return _SURROGATE.sub("\ufffd", value)


def event_rows(sid: str, events: list[StoredEvent]) -> list[EventRow]:
    return [(sid, seq, kind, dump(data), at) for seq, kind, data, at in events]


def events_size(rows: list[EventRow]) -> int:
    return sum(len(r[3]) for r in rows)


def insert_events(db: sqlite3.Connection, rows: list[EventRow]) -> None:
    db.executemany(
        "INSERT OR IGNORE INTO events (session_id, seq, kind, data, at) VALUES (?, ?, ?, ?, ?)",
        rows,
    )
