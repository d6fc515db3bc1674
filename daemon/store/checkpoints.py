"""Checkpoints: what each file was before a turn first wrote it, kept to be put back.

Before any edit tool replaces or creates a file (the journal's "started"
record, `tools/edit/journal.py`), `CheckpointStore.take` keeps the file's bytes
and mode as a content-addressed blob (`checkpoints/<2 hex>/<sha256>` beside the
database: written, fsynced and renamed into place before the write goes on), or
the fact that there was no file, with one row per session, turn and path. A
later write of the same path in the same turn only updates the row's `after`
digest (what the agent left there), which undo compares with the disk to find
someone else's change. Rows and blobs follow the sessions' retention; past
`CAP_BYTES` of blobs the oldest checkpoints go first.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import sqlite3
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from coding_harness.daemon.tools.edit.writes import replace_bytes

log = logging.getLogger(__name__)

BLOB_LIMIT = 16_000_000  # the largest file an edit tool writes (writes.MAX_EDIT_BYTES)
CAP_BYTES = 512 * 1024 * 1024  # all blobs together; the oldest checkpoints go past it

SCHEMA = """
CREATE TABLE IF NOT EXISTS checkpoints (
    session_id TEXT NOT NULL, turn TEXT NOT NULL, path TEXT NOT NULL,
    before_blob TEXT, before_mode INTEGER, after TEXT, at REAL NOT NULL,
    undone INTEGER NOT NULL DEFAULT 0, restorable INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (session_id, turn, path)
);
-- what the model is told at the start of the session's next turn (after an undo)
CREATE TABLE IF NOT EXISTS turn_notes_pending (session_id TEXT PRIMARY KEY, note TEXT NOT NULL);
"""


@dataclass(kw_only=True, slots=True, frozen=True)
class Checkpoint:
    """One path as a turn found it: `blob` None means there was no file."""

    session: str
    turn: str
    path: str  # workspace-relative
    blob: str | None
    mode: int | None
    after: str | None  # sha256 of what the turn's last write left; None: it removed it
    at: float
    restorable: bool = True  # False: a command changed it and it was too large to keep


def sha256(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


class CheckpointStore:
    def __init__(self, db: sqlite3.Connection, folder: Path) -> None:
        self._db = db
        self.folder = folder
        self._blob_bytes: int | None = None  # all blobs' size, counted once, then kept up
        db.executescript(SCHEMA)

    # -- taking ----------------------------------------------------------
    def take(self, session: str, turn: str, root: Path, rel: str, after: str | None) -> bool:
        """Keep `rel` as it is now, unless this turn kept it already (then only the
        `after` digest changes); True when a new checkpoint was taken."""
        if self._kept_already(session, turn, rel, after):
            return False
        data, mode = read_state(root / rel)
        self._insert(session, turn, rel, data, mode, after, restorable=True)
        return True

    def take_from(
        self,
        session: str,
        turn: str,
        rel: str,
        before: bytes | None,
        mode: int | None,
        after: str | None,
        *,
        restorable: bool = True,
    ) -> bool:
        """Keep `rel` as it was before a command changed it (`before`, None: no file);
        a path this turn kept already only gets its new `after`. True when new."""
        if self._kept_already(session, turn, rel, after):
            return False
        self._insert(session, turn, rel, before, mode, after, restorable=restorable)
        return True

    def _kept_already(self, session: str, turn: str, rel: str, after: str | None) -> bool:
        """When this turn kept `rel` already, record its new `after` and say so."""
        row = self._db.execute(
            "SELECT 1 FROM checkpoints WHERE session_id = ? AND turn = ? AND path = ?",
            (session, turn, rel),
        ).fetchone()
        if row is None:
            return False
        with self._db:
            self._db.execute(
                "UPDATE checkpoints SET after = ? WHERE session_id = ? AND turn = ? AND path = ?",
                (after, session, turn, rel),
            )
        return True

    def _insert(
        self,
        session: str,
        turn: str,
        rel: str,
        data: bytes | None,
        mode: int | None,
        after: str | None,
        *,
        restorable: bool,
    ) -> None:
        blob = self.save_blob(data) if data is not None else None
        with self._db:
            self._db.execute(
                "INSERT INTO checkpoints (session_id, turn, path, before_blob, before_mode,"
                " after, at, restorable) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (session, turn, rel, blob, mode, after, time.time(), int(restorable)),
            )
        self._keep_under_cap()

    def save_blob(self, data: bytes) -> str:
        """Store `data` under its digest (once), durably; its digest."""
        digest = hashlib.sha256(data).hexdigest()
        path = self.blob_path(digest)
        if path.exists():
            return digest
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        replace_bytes(path, data, mode=0o600)
        if self._blob_bytes is not None:
            self._blob_bytes += len(data)
        return digest

    def blob_path(self, digest: str) -> Path:
        return self.folder / digest[:2] / digest

    def read_blob(self, digest: str) -> bytes:
        return self.blob_path(digest).read_bytes()

    # -- reading ---------------------------------------------------------
    def of_session(self, session: str, *, undone: bool = False) -> list[Checkpoint]:
        """The session's checkpoints (not undone ones, unless asked), oldest first."""
        rows = self._db.execute(
            "SELECT session_id, turn, path, before_blob, before_mode, after, at, restorable"
            " FROM checkpoints WHERE session_id = ? AND (undone = 0 OR ?) ORDER BY at, rowid",
            (session, int(undone)),
        ).fetchall()
        return [
            Checkpoint(
                session=s, turn=t, path=p, blob=b, mode=m, after=a, at=at, restorable=bool(r)
            )
            for s, t, p, b, m, a, at, r in rows
        ]

    def mark_undone(self, session: str, turns: list[str], paths: list[str]) -> None:
        with self._db:
            self._db.executemany(
                "UPDATE checkpoints SET undone = 1 WHERE session_id = ? AND turn = ? AND path = ?",
                [(session, turn, path) for turn in turns for path in paths],
            )

    def leave_note(self, session: str, note: str) -> None:
        """A note for the start of the session's next turn (added to any left before)."""
        with self._db:
            self._db.execute(
                "INSERT INTO turn_notes_pending (session_id, note) VALUES (?, ?)"
                " ON CONFLICT (session_id) DO UPDATE SET note = note || excluded.note",
                (session, note),
            )

    def take_note(self, session: str) -> str:
        row = self._db.execute(
            "SELECT note FROM turn_notes_pending WHERE session_id = ?", (session,)
        ).fetchone()
        if row is None:
            return ""
        with self._db:
            self._db.execute("DELETE FROM turn_notes_pending WHERE session_id = ?", (session,))
        return str(row[0])

    # -- forgetting ------------------------------------------------------
    def forget_sessions(self, sessions: list[str]) -> None:
        with self._db:
            for table in ("checkpoints", "turn_notes_pending"):
                self._db.executemany(
                    f"DELETE FROM {table} WHERE session_id = ?", [(s,) for s in sessions]
                )
        self.remove_unused_blobs()

    def remove_unused_blobs(self) -> int:
        used = {r[0] for r in self._db.execute("SELECT DISTINCT before_blob FROM checkpoints")}
        self._blob_bytes = None  # counted again when next needed
        removed = 0
        for blob in self.folder.glob("??/*"):
            if blob.name not in used and not blob.name.startswith("."):
                with contextlib.suppress(OSError):
                    blob.unlink()
                    removed += 1
        return removed

    def _keep_under_cap(self) -> None:
        if self._blob_bytes is None:
            self._blob_bytes = sum(p.stat().st_size for p in self.folder.glob("??/*"))
        if self._blob_bytes <= CAP_BYTES:
            return
        oldest = self._db.execute(
            "SELECT session_id, turn FROM checkpoints GROUP BY session_id, turn ORDER BY MIN(at)"
        ).fetchall()
        for session, turn in oldest[: max(1, len(oldest) // 10)]:
            log.info("checkpoints over %d bytes: dropping %s %s", CAP_BYTES, session, turn)
            with self._db:
                self._db.execute(
                    "DELETE FROM checkpoints WHERE session_id = ? AND turn = ?", (session, turn)
                )
        self.remove_unused_blobs()


def read_state(path: Path) -> tuple[bytes | None, int | None]:
    """A file's bytes and permission bits, or (None, None) when there is none."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None, None
    if not stat.S_ISREG(info.st_mode) or info.st_size > BLOB_LIMIT:
        raise OSError(f"{path} is not a regular file an edit could write")
    return path.read_bytes(), stat.S_IMODE(info.st_mode)
