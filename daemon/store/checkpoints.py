"""Checkpoints: what each file was before a turn first wrote it, kept to be put back.

Before any edit tool replaces or creates a file (the journal's "started"
record, `tools/edit/journal.py`), `CheckpointStore.take` keeps the file's bytes
and mode as a content-addressed blob (`checkpoints/<2 hex>/<sha256>` beside the
database: written, fsynced and renamed into place before the write goes on), or
the fact that there was no file, with one row per session, turn and path. A
later write of the same path in the same turn only updates the row's `after`
digest (what the agent left there), which undo compares with the disk to find
someone else's change. Rows and blobs follow the sessions' retention. The store
is shared by every project; past its cap (`CAP_BYTES` unless the store is given
another) the project that holds the most gives up its own oldest turns first
(`checkpoint_cap.py`), and each turn dropped is recorded until its session is
told (`take_dropped`: a notice at the session's next write or turn) and named in
its listing. A file is read for a checkpoint by `workspace_read` (no symlink, no
more than the limit whatever its size said) and a blob is checked against its
digest when read back.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from coding_harness.daemon.store.checkpoint_cap import Held, turns_to_drop
from coding_harness.daemon.store.workspace_read import read_regular
from coding_harness.daemon.tools.edit.writes import replace_bytes

log = logging.getLogger(__name__)

BLOB_LIMIT = 16_000_000  # the largest file an edit tool writes (writes.MAX_EDIT_BYTES)
CAP_BYTES = 512 * 1024 * 1024  # all blobs together; the biggest project's oldest go past it
LOW_WATER = 0.9  # once over the cap, turns go until the blobs hold this share of it

SCHEMA = """
CREATE TABLE IF NOT EXISTS checkpoints (
    session_id TEXT NOT NULL, turn TEXT NOT NULL, path TEXT NOT NULL,
    before_blob TEXT, before_mode INTEGER, after TEXT, at REAL NOT NULL,
    undone INTEGER NOT NULL DEFAULT 0, restorable INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (session_id, turn, path)
);
-- what the model is told at the start of the session's next turn (after an undo)
CREATE TABLE IF NOT EXISTS turn_notes_pending (session_id TEXT PRIMARY KEY, note TEXT NOT NULL);
-- turns whose checkpoints the cap dropped; told: the session was given a notice
CREATE TABLE IF NOT EXISTS checkpoints_dropped (
    session_id TEXT NOT NULL, turn TEXT NOT NULL, at REAL NOT NULL,
    told INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (session_id, turn)
);
"""
# Columns added since the first schema: (name, declaration).
ADDED_COLUMNS = (("project", "TEXT NOT NULL DEFAULT ''"), ("size", "INTEGER"))


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
    def __init__(self, db: sqlite3.Connection, folder: Path, *, cap_bytes: int = CAP_BYTES) -> None:
        self._db = db
        self.folder = folder
        self.cap_bytes = cap_bytes
        self._blob_bytes: int | None = None  # all blobs' size, counted once, then kept up
        db.executescript(SCHEMA)
        _add_columns(db)

    # -- taking ----------------------------------------------------------
    def take(self, session: str, turn: str, root: Path, rel: str, after: str | None) -> bool:
        """Keep `rel` as it is now, unless this turn kept it already (then only the
        `after` digest changes); True when a new checkpoint was taken."""
        if self._kept_already(session, turn, rel, after):
            return False
        data, mode = read_state(root, rel)
        self._insert(session, turn, str(root), rel, data, mode, after, restorable=True)
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
        project: str,
        restorable: bool = True,
    ) -> bool:
        """Keep `rel` of `project` (the workspace) as it was before a command changed
        it (`before`, None: no file); a path this turn kept already only gets its new
        `after`. True when new."""
        if self._kept_already(session, turn, rel, after):
            return False
        self._insert(session, turn, project, rel, before, mode, after, restorable=restorable)
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
        project: str,
        rel: str,
        data: bytes | None,
        mode: int | None,
        after: str | None,
        *,
        restorable: bool,
    ) -> None:
        blob = self.save_blob(data) if data is not None else None
        size = len(data) if data is not None else 0
        with self._db:
            self._db.execute(
                "INSERT INTO checkpoints (session_id, turn, path, before_blob, before_mode,"
                " after, at, restorable, project, size) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    session,
                    turn,
                    rel,
                    blob,
                    mode,
                    after,
                    time.time(),
                    int(restorable),
                    project,
                    size,
                ),
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
        """The blob's bytes, checked against its name: a damaged blob raises OSError."""
        data = self.blob_path(digest).read_bytes()
        if hashlib.sha256(data).hexdigest() != digest:
            raise OSError(f"checkpoint blob {digest[:12]} is damaged")
        return data

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
            for table in ("checkpoints", "turn_notes_pending", "checkpoints_dropped"):
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
        if self._blob_bytes <= self.cap_bytes:
            return
        rows = [
            Held(project=p, session=s, turn=t, blob=b, size=self._size(b, size))
            for p, s, t, b, size in self._db.execute(
                "SELECT project, session_id, turn, before_blob, size FROM checkpoints"
                " ORDER BY at, rowid"
            )
        ]
        target = int(self.cap_bytes * LOW_WATER)
        dropped = turns_to_drop(rows, self._blob_bytes, target)
        now = time.time()
        with self._db:
            for session, turn in dropped:
                log.info("checkpoints over %d bytes: dropping %s %s", self.cap_bytes, session, turn)
                self._db.execute(
                    "DELETE FROM checkpoints WHERE session_id = ? AND turn = ?", (session, turn)
                )
                self._db.execute(
                    "INSERT OR IGNORE INTO checkpoints_dropped (session_id, turn, at)"
                    " VALUES (?, ?, ?)",
                    (session, turn, now),
                )
        self.remove_unused_blobs()

    def _size(self, blob: str | None, size: int | None) -> int:
        """A row's blob size: as recorded, or (a row from before sizes were) on disk."""
        if blob is None:
            return 0
        if size is not None:
            return size
        try:
            return self.blob_path(blob).stat().st_size
        except OSError:
            return 0

    def take_dropped(self, session: str) -> list[str]:
        """The session's turns whose checkpoints the cap dropped and it was not told of
        yet, oldest first; from now on they count as told."""
        turns = self.dropped(session, untold=True)
        if turns:
            with self._db:
                self._db.execute(
                    "UPDATE checkpoints_dropped SET told = 1 WHERE session_id = ?", (session,)
                )
        return turns

    def dropped(self, session: str, *, untold: bool = False) -> list[str]:
        """The session's turns whose checkpoints the cap dropped, oldest first."""
        rows = self._db.execute(
            "SELECT turn FROM checkpoints_dropped WHERE session_id = ? AND (told = 0 OR ?)"
            " ORDER BY at, rowid",
            (session, int(not untold)),
        )
        return [str(turn) for (turn,) in rows]


def _add_columns(db: sqlite3.Connection) -> None:
    """Bring a checkpoints table from an older daemon up to the columns it has now;
    its rows' project is their session's folder where the sessions table knows it."""
    have = {row[1] for row in db.execute("PRAGMA table_info(checkpoints)")}
    missing = [(name, kind) for name, kind in ADDED_COLUMNS if name not in have]
    if not missing:
        return
    with db:
        for name, kind in missing:
            db.execute(f"ALTER TABLE checkpoints ADD COLUMN {name} {kind}")
        if "project" in dict(missing):
            with contextlib.suppress(sqlite3.OperationalError):  # no sessions table
                db.execute(
                    "UPDATE checkpoints SET project = COALESCE("
                    "(SELECT cwd FROM sessions WHERE sessions.id = session_id), '')"
                )


def read_state(root: Path, rel: str) -> tuple[bytes | None, int | None]:
    """The bytes and permission bits of `rel` in the workspace `root`, or (None, None)
    when there is no file; OSError for anything an edit could not have written (a
    symlink, no regular file, past BLOB_LIMIT, a folder that leads out)."""
    found = read_regular(root, rel, BLOB_LIMIT)
    return (None, None) if found is None else found
