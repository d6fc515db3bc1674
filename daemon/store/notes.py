"""The store's table of project notes: its schema, its rows, and `ProjectNotes` (`store.notes`).

A project is the workspace's real path. Each note is one row (kind, text, its
normalised text, when it was added). Adding is curated inside the write's own
transaction (`notes_curator.py`): a note whose normalised text the project
already holds is dropped, and past `MAX_NOTES` the oldest rows go. A store
made before notes existed gets the table when it is opened (it is created only
when missing, so opening a store on a full disk writes nothing).
"""

from __future__ import annotations

import logging
import sqlite3
import time

from coding_harness.daemon.context.notes_curator import MAX_NOTES, Note, Redact, fresh
from coding_harness.daemon.store.backlog import StoreWriter, Write
from coding_harness.daemon.store.rows import storable

log = logging.getLogger(__name__)

NOTES_TABLE = "project_notes"
NOTES_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {NOTES_TABLE} (
    id INTEGER PRIMARY KEY AUTOINCREMENT, project TEXT NOT NULL, kind TEXT NOT NULL,
    text TEXT NOT NULL, norm TEXT NOT NULL, at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS project_notes_by_project ON {NOTES_TABLE} (project, at);
"""


def migrate_notes(db: sqlite3.Connection) -> None:
    """Create the notes table in a store that lacks it; a failure is logged, and the
    notes methods then find no table (reads are empty, writes are refused)."""
    found = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (NOTES_TABLE,)
    ).fetchone()
    if found is not None:
        return
    try:
        db.executescript(f"BEGIN;{NOTES_SCHEMA}COMMIT;")
    except sqlite3.Error as exc:
        if db.in_transaction:
            db.execute("ROLLBACK")
        log.warning("the store has no table for project notes (%s); notes are not kept", exc)


def read_notes(db: sqlite3.Connection, project: str) -> list[Note]:
    """The project's notes, oldest first."""
    try:
        rows = db.execute(
            f"SELECT id, kind, text, at FROM {NOTES_TABLE} WHERE project = ? ORDER BY at, id",
            (storable(project),),
        ).fetchall()
    except sqlite3.OperationalError:  # no table: see migrate_notes
        return []
    return [Note(id=i, kind=k, text=t, at=a) for i, k, t, a in rows]


def add_notes(
    db: sqlite3.Connection,
    project: str,
    candidates: list[tuple[str, str]],
    redact: Redact | None = None,
    now: float | None = None,
) -> None:
    """Add the candidates worth keeping (inside the caller's transaction), then trim."""
    key = storable(project)
    kept = [r[0] for r in db.execute(f"SELECT norm FROM {NOTES_TABLE} WHERE project = ?", (key,))]
    now = time.time() if now is None else now
    rows = [
        (key, kind, storable(text), storable(norm), now)
        for kind, text, norm in fresh(candidates, kept, redact)
    ]
    db.executemany(
        f"INSERT INTO {NOTES_TABLE} (project, kind, text, norm, at) VALUES (?, ?, ?, ?, ?)", rows
    )
    db.execute(
        f"DELETE FROM {NOTES_TABLE} WHERE project = ? AND id NOT IN"
        f" (SELECT id FROM {NOTES_TABLE} WHERE project = ? ORDER BY at DESC, id DESC LIMIT ?)",
        (key, key, MAX_NOTES),
    )


def remove_notes(db: sqlite3.Connection, project: str, ids: list[int] | None) -> None:
    """Remove the project's notes with these ids; every one of them with None."""
    key = storable(project)
    if ids is None:
        db.execute(f"DELETE FROM {NOTES_TABLE} WHERE project = ?", (key,))
        return
    db.executemany(
        f"DELETE FROM {NOTES_TABLE} WHERE project = ? AND id = ?", [(key, i) for i in ids]
    )


class ProjectNotes:
    """The notes table as the store offers it: reads straight from the database, writes
    through the store's writer (a write the disk refuses is kept for the next)."""

    def __init__(self, db: sqlite3.Connection, writer: StoreWriter) -> None:
        self._db = db
        self._writer = writer

    def read(self, project: str) -> list[Note]:
        """The notes kept for a project (the workspace's real path), oldest first."""
        return read_notes(self._db, project)

    def add(self, project: str, notes: list[tuple[str, str]], redact: Redact | None = None) -> bool:
        """Keep (kind, text) notes for a project, curated: cleaned, deduplicated, capped."""
        now = time.time()
        return self._writer.write(
            Write(apply=lambda db: add_notes(db, project, notes, redact, now))
        )

    def remove(self, project: str, ids: list[int] | None) -> bool:
        """Remove a project's notes by id; all of them with None."""
        return self._writer.write(Write(apply=lambda db: remove_notes(db, project, ids)))
