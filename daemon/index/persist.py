"""The code index on disk: one SQLite file per workspace in the state folder.

`index/<digest of the workspace's real path>.sqlite` holds one row per file
(path, size, mtime_ns, language, why it was skipped, its definitions and
references as JSON). A daemon that restarts loads the rows and re-parses only
the files whose size or mtime changed. The file records the workspace it
belongs to and the version of the tagger (this format, tree-sitter and the
grammar packages): rows written by another version are dropped, so a new
grammar re-parses everything once. A damaged or unreadable file is replaced
by an empty index; a write the disk refuses leaves the index in memory only.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import sqlite3
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from coding_harness.daemon.index.tags import FileTags

log = logging.getLogger(__name__)

FORMAT = 1
_GRAMMAR_PACKAGES = (
    "tree-sitter",
    "tree-sitter-python",
    "tree-sitter-javascript",
    "tree-sitter-typescript",
    "tree-sitter-go",
    "tree-sitter-rust",
    "tree-sitter-c",
    "tree-sitter-cpp",
    "tree-sitter-java",
    "tree-sitter-ruby",
)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    language TEXT NOT NULL, skipped TEXT NOT NULL,
    definitions TEXT NOT NULL, refs TEXT NOT NULL
);
"""


@dataclass(kw_only=True, slots=True)
class StoredFile:
    size: int
    mtime_ns: int
    language: str
    tags: FileTags


def index_path(state_dir: Path, root: Path) -> Path:
    digest = hashlib.sha256(str(root).encode("utf-8", "surrogateescape")).hexdigest()[:24]
    return state_dir / "index" / f"{digest}.sqlite"


def tagger_version() -> str:
    versions = []
    for name in _GRAMMAR_PACKAGES:
        try:
            versions.append(f"{name}={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{name}=?")
    return f"format={FORMAT};" + ";".join(versions)


class IndexFile:
    """Reads and writes one workspace's rows; each call opens its own connection,
    so the thread that refreshes the index is the one that writes."""

    def __init__(self, path: Path, root: Path) -> None:
        self.path = path
        self.root = str(root)
        self.problem: str | None = None

    def load(self) -> dict[str, StoredFile] | None:
        """The stored rows; None when the file is missing, foreign, stale or damaged
        (there is no index of this workspace to answer from: it is built)."""
        try:
            return self._load()
        except (sqlite3.Error, OSError, ValueError, TypeError) as exc:
            log.warning("the code index at %s cannot be read (%s); rebuilding it", self.path, exc)
            self._discard()
            return None

    def _load(self) -> dict[str, StoredFile] | None:
        if not self.path.exists():
            return None
        with _connect(self.path) as db:
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
            if meta.get("root") != self.root or meta.get("tagger") != tagger_version():
                return None
            rows = db.execute(
                "SELECT path, size, mtime_ns, language, skipped, definitions, refs FROM files"
            ).fetchall()
        return {row[0]: _stored(row) for row in rows}

    def save(self, changed: dict[str, StoredFile], removed: Iterable[str], whole: bool) -> None:
        """Write `changed` rows and drop `removed`; `whole`: the rows are the entire index."""
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            with _connect(self.path) as db:
                if whole:
                    db.execute("DELETE FROM files")
                db.executemany(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                    [("root", self.root), ("tagger", tagger_version())],
                )
                db.executemany("DELETE FROM files WHERE path = ?", [(p,) for p in removed])
                db.executemany(
                    "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [_row(path, stored) for path, stored in changed.items()],
                )
            self.problem = None
        except (sqlite3.Error, OSError) as exc:
            self.problem = f"the code index could not be saved to {self.path}: {exc}"
            log.warning("%s", self.problem)

    def _discard(self) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)


@contextlib.contextmanager
def _connect(path: Path) -> Iterator[sqlite3.Connection]:
    """A connection whose statements commit together when the block ends, or not at all."""
    db = sqlite3.connect(path, timeout=5.0)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(_SCHEMA)
        with db:
            yield db
    finally:
        db.close()


def _row(path: str, stored: StoredFile) -> tuple[object, ...]:
    tags = stored.tags
    return (
        path,
        stored.size,
        stored.mtime_ns,
        stored.language,
        tags.skipped,
        json.dumps(tags.rows, separators=(",", ":")),
        json.dumps(tags.references, separators=(",", ":")),
    )


def _stored(row: tuple[Any, ...]) -> StoredFile:
    _, size, mtime_ns, language, skipped, definitions, refs = row
    intern = sys.intern
    tags = FileTags(
        rows=[(intern(n), k, line, s) for n, k, line, s in json.loads(str(definitions))],
        references={intern(name): count for name, count in json.loads(str(refs)).items()},
        skipped=str(skipped),
    )
    return StoredFile(size=int(size), mtime_ns=int(mtime_ns), language=str(language), tags=tags)
