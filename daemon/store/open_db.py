"""Opening the session store: permissions, pragmas, schema, and a damaged file.

`open_database` creates the file 0600, switches it to WAL, checks it, and
creates the tables. A file that is not a database, fails its check, or was
truncated to nothing (SQLite would take an empty file for a new database, and
every session would silently be gone) is moved aside with a timestamp (its
-wal and -shm too) and a fresh one is created, so the daemon never
crash-loops on it; the returned notice says so once. A disk that refuses
writes is not damage: the file stays, and `StoreUnavailable` says what to fix.
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
-- the highest event seq a session may have sent: numbering resumes past it after a crash
CREATE TABLE IF NOT EXISTS seq_marks (session_id TEXT PRIMARY KEY, reserved INTEGER NOT NULL);
-- each session's permission mode, so a restart keeps it
CREATE TABLE IF NOT EXISTS session_modes (session_id TEXT PRIMARY KEY, mode TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS usage_by_day ON usage (day, provider);
-- a session's spending is summed before every model call under a session limit
CREATE INDEX IF NOT EXISTS usage_by_session ON usage (session_id, turn);
"""


class StoreUnavailable(OSError):
    """The store cannot be opened for a reason that is not damage (a full disk, say)."""


def _unavailable(path: Path, exc: Exception) -> StoreUnavailable:
    return StoreUnavailable(
        f"cannot open the session store {path} ({exc}); check that the disk has room and "
        f"that {path.parent} is a folder you own and can write, or set XDG_STATE_HOME to another"
    )


def open_database(path: Path) -> tuple[sqlite3.Connection, str | None]:
    """The store's connection, and a notice when a damaged file was replaced."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        return _connect(path), None
    except _Damaged as exc:
        aside = path.with_name(f"{path.name}.corrupt-{int(time.time())}")
        log.error("session store %s is unusable (%s); moved to %s", path, exc, aside)
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                Path(f"{path}{suffix}").rename(f"{aside}{suffix}")
        notice = (
            f"the session store was damaged and moved to {aside} ({exc}); sessions start afresh"
        )
        return _connect(path), notice


class _Damaged(Exception):
    """The file is not a usable database: move it aside."""


def _connect(path: Path) -> sqlite3.Connection:
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        if path.stat().st_size == 0:
            raise _Damaged("the file is empty: it was truncated") from None
    else:
        os.close(fd)
    try:
        db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise _unavailable(path, exc) from exc
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")
        if db.execute("PRAGMA quick_check").fetchone()[0] != "ok":
            raise _Damaged("integrity check failed")
        # Tables that exist are not written to, so a full disk still opens a store.
        version = db.execute("PRAGMA user_version").fetchone()[0]
        stamp = f"PRAGMA user_version={SCHEMA_VERSION};" if version != SCHEMA_VERSION else ""
        db.executescript(f"BEGIN;{SCHEMA}{stamp}COMMIT;")
    except sqlite3.DatabaseError as exc:
        db.close()
        if type(exc) is sqlite3.DatabaseError:  # not a database, or corrupt
            raise _Damaged(str(exc)) from exc
        raise _unavailable(path, exc) from exc
    except _Damaged:
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
        db.execute("COMMIT")
    except BaseException:
        # A failed COMMIT (a full disk) leaves the transaction open; an I/O error
        # may already have rolled it back.
        if db.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
        raise
