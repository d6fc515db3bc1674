"""One turn's checkpoints, taken as its events go by.

`TurnCheckpoints` watches the events the turn's recorder emits. A write's
"started" journal record (`tools/edit/journal.py`) comes before the write: the
file is kept as it is then. A tool call that may run a command (`run_shell`, and
the edit tools, whose applied edits are followed by `make check`) gets a look at
the workspace before it runs (`workspace_snapshot.py`), and its result another;
every file that changed between the two is kept as it was before. A file that
cannot be kept is named in a notice: that change cannot be undone.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3

from coding_harness.daemon.agent.seams import JSONObject
from coding_harness.daemon.sessions.session import Session
from coding_harness.daemon.store.checkpoints import BLOB_LIMIT
from coding_harness.daemon.store.workspace_snapshot import (
    TOO_LARGE,
    Change,
    Seen,
    WorkspaceSnapshot,
)
from coding_harness.daemon.tools.edit.journal import STARTED, WRITE_EVENT
from coding_harness.protocol.methods import EventKind

log = logging.getLogger(__name__)

# The tools whose run may change files through a command.
COMMAND_TOOLS = frozenset({"run_shell", "propose_edit", "replace_text", "write_file"})


class TurnCheckpoints:
    def __init__(self, session: Session, turn: str) -> None:
        self._session = session
        self._turn = turn
        self._snapshot: WorkspaceSnapshot | None = None
        self._before: dict[str, Seen] | None = None

    def before_event(self, kind: str, data: JSONObject) -> None:
        """Called before the event is published (and before what it announces runs)."""
        if self._session.store is None:
            return
        if kind == WRITE_EVENT and data.get("phase") == STARTED:
            after = data.get("after")
            self._write(str(data.get("path", "")), after if isinstance(after, str) else None)
        elif kind == EventKind.TOOL_CALL and data.get("name") in COMMAND_TOOLS:
            self._look_before()
        elif kind == EventKind.TOOL_RESULT and data.get("name") in COMMAND_TOOLS:
            self._look_after()

    def _write(self, rel: str, after: str | None) -> None:
        store = self._session.store
        if store is None or not rel:
            return
        try:
            taken = store.checkpoints.take(
                self._session.id, self._turn, self._session.cwd, rel, after
            )
        except (OSError, sqlite3.Error) as exc:
            self._not_kept(rel, exc)
            return
        if taken:
            self._announce([rel])

    def _look_before(self) -> None:
        if self._snapshot is None:
            self._snapshot = WorkspaceSnapshot(self._session.cwd)
        self._snapshot.refresh()
        self._before = self._snapshot.current()

    def _look_after(self) -> None:
        if self._snapshot is None or self._before is None:
            return
        self._snapshot.refresh()
        changes = self._snapshot.changes(self._before)
        self._before = None
        kept = [change.path for change in changes if self._command_change(change)]
        if kept:
            self._announce(kept)

    def _command_change(self, change: Change) -> bool:
        store = self._session.store
        assert store is not None
        target = self._session.cwd / change.path
        try:
            info = target.lstat()
            after = _digest(target.read_bytes()) if info.st_size <= BLOB_LIMIT else ""
        except FileNotFoundError:
            after = None
        except OSError as exc:
            self._not_kept(change.path, exc)
            return False
        restorable = change.before is not TOO_LARGE
        before = change.before if isinstance(change.before, bytes) else None
        try:
            return store.checkpoints.take_from(
                self._session.id,
                self._turn,
                change.path,
                before,
                change.mode,
                after,
                restorable=restorable,
            )
        except (OSError, sqlite3.Error) as exc:
            self._not_kept(change.path, exc)
            return False

    def _announce(self, files: list[str]) -> None:
        self._session.emit(EventKind.CHECKPOINT, {"turn": self._turn, "files": files})

    def _not_kept(self, rel: str, exc: BaseException) -> None:
        log.warning("no checkpoint of %s: %s", rel, exc)
        message = f"{rel} could not be checkpointed ({exc}); this change cannot be undone"
        self._session.emit(EventKind.NOTICE, {"message": message})


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
