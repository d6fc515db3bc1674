"""Opening the session store: permissions, pragmas, schema, and a damaged file.

`open_database` creates the file 0600, switches it to WAL, checks it, and
creates the tables. A file that is not a database or fails its check is moved
aside with a timestamp (its -wal and -shm too) and a fresh one is created, so
the daemon never crash-loops on it; the returned notice says so once.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY, cwd TEXT NOT NULL, provider TEXT, model TEXT,
    created_at REAL NOT NULL, last_activity REAL NOT NULL, closed INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS messages (
    session_id TEXT NOT NULL, idx INTEGER NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (session_id, idx)
);
CREATE TABLE IF NOT EXISTS events (
    session_id TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL, data TEXT NOT NULL,
    at REAL NOT NULL, PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS turns (
    id TEXT NOT NULL, session_id TEXT NOT NULL, text TEXT NOT NULL, state TEXT NOT NULL,
    exit_code INTEGER, started_at REAL NOT NULL, finished_at REAL,
    PRIMARY KEY (session_id, id)
);
CREATE TABLE IF NOT EXISTS approvals (
    id TEXT NOT NULL, session_id TEXT NOT NULL, kind TEXT NOT NULL, path TEXT NOT NULL,
    requested_at REAL NOT NULL, decision TEXT, reason TEXT, client TEXT, resolved_at REAL,
    PRIMARY KEY (session_id, id)
);
CREATE TABLE IF NOT EXISTS usage (
    session_id TEXT NOT NULL, turn TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL, cached_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL, cost_usd REAL, day TEXT NOT NULL, at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS usage_by_day ON usage (day, provider);
"""


def open_database(path: Path) -> tuple[sqlite3.Connection, str | None]:
    """The store's connection, and a notice when a damaged file was replaced."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        return _connect(path), None
    except sqlite3.DatabaseError as exc:
        aside = path.with_name(f"{path.name}.corrupt-{int(time.time())}")
        log.error("session store %s is unusable (%s); moved to %s", path, exc, aside)
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                Path(f"{path}{suffix}").rename(f"{aside}{suffix}")
        notice = f"the session store was damaged and moved to {aside}; sessions start afresh"
        return _connect(path), notice


def _connect(path: Path) -> sqlite3.Connection:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    os.close(fd)
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")
        if db.execute("PRAGMA quick_check").fetchone()[0] != "ok":
            raise sqlite3.DatabaseError("integrity check failed")
        db.executescript(f"BEGIN;{SCHEMA}PRAGMA user_version={SCHEMA_VERSION};COMMIT;")
    except sqlite3.DatabaseError:
        db.close()
        raise
    return db


@contextlib.contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    if db.in_transaction:
        yield db
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
