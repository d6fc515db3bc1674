"""The worktrees the daemon made: one record each, kept in the state folder.

`worktrees.json` in the state folder holds, per worktree, its name, branch,
folder, the repository it belongs to (the main worktree's folder), the branch it
came from and the session working in it. The daemon is the only writer (its
state lock keeps it one), and each change replaces the file whole, so a crash
leaves the old list or the new one. A worktree is named by its name, its
session's id, short id, or a prefix of either that fits one worktree only.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from coding_harness.protocol import paths

FILE_NAME = "worktrees.json"
# The file last read: its signature and its content (`session.list` asks per session).
_READ: list[Any] = [None, None]


class NoSuchWorktree(Exception):
    """The ID names no worktree, or several; the text says which and what to do."""


@dataclass(kw_only=True, slots=True)
class WorktreeRecord:
    name: str
    branch: str
    path: str
    repo: str  # the main worktree's folder
    base: str  # the branch it came from, and merges back into
    base_commit: str
    session: str | None = None
    created_at: float = field(default_factory=time.time)

    def brief(self) -> dict[str, Any]:
        """What a session's summary carries."""
        return {"name": self.name, "branch": self.branch, "path": self.path}

    def wire(self) -> dict[str, Any]:
        return asdict(self)


def _record(raw: Any) -> WorktreeRecord | None:
    if not isinstance(raw, dict):
        return None
    try:
        return WorktreeRecord(**raw)
    except TypeError:
        return None


class WorktreeBook:
    """The records, read from and written to `worktrees.json` in `state`."""

    def __init__(self, state: Path | None = None) -> None:
        self.file = (state or paths.state_dir()) / FILE_NAME

    def all(self) -> list[WorktreeRecord]:
        try:
            info = self.file.stat()
            signature = (str(self.file), info.st_size, info.st_mtime_ns, info.st_ino)
            if _READ[0] != signature:
                _READ[:] = [signature, json.loads(self.file.read_text(encoding="utf-8"))]
            raw = _READ[1]
        except (OSError, ValueError):
            return []
        items = raw.get("worktrees") if isinstance(raw, dict) else None
        found = [_record(item) for item in items or []]
        return sorted((r for r in found if r is not None), key=lambda r: r.created_at)

    def _write(self, records: list[WorktreeRecord]) -> None:
        self.file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        text = json.dumps({"worktrees": [r.wire() for r in records]}, indent=1)
        handle, temporary = tempfile.mkstemp(dir=self.file.parent, prefix=".worktrees-")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(text)
            Path(temporary).replace(self.file)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def add(self, record: WorktreeRecord) -> None:
        self._write([*(r for r in self.all() if r.name != record.name), record])

    def remove(self, name: str) -> None:
        self._write([r for r in self.all() if r.name != name])

    def named(self, name: str) -> WorktreeRecord | None:
        return next((r for r in self.all() if r.name == name), None)

    def of_session(self, session: str) -> WorktreeRecord | None:
        return next((r for r in self.all() if r.session == session), None)

    def find(self, wanted: str) -> WorktreeRecord:
        """The worktree `wanted` names (see the module's docstring)."""
        records = self.all()
        for record in records:
            if wanted in (record.name, record.session):
                return record
        fits = [r for r in records if r.session and _session_prefix(r.session, wanted)]
        fits += [r for r in records if r.name.startswith(wanted) and r not in fits]
        if len(fits) == 1:
            return fits[0]
        if fits:
            shown = ", ".join(r.name for r in fits[:5])
            raise NoSuchWorktree(f"{wanted!r} fits {len(fits)} worktrees ({shown}); give more")
        raise NoSuchWorktree(f"no worktree {wanted!r}; `harness worktree list` lists them")


def _session_prefix(session: str, wanted: str) -> bool:
    return session.startswith(wanted) or session.rsplit("-", 1)[-1].startswith(wanted)
