"""One turn's checkpoints, taken as its events go by.

`TurnCheckpoints` is told of each write the turn's recorder sees: the journal's
"started" record (`tools/edit/journal.py`) comes before the write, so the file
is kept as it is then. Each tool call that may run a command (`run_shell`, and
the edit tools, whose applied edits are followed by `make check`) comes between
`look_before` and `look_after` (`turns/checkpointing_tools.py` calls them): two
looks at the workspace (`workspace_snapshot.py`), taken in a worker thread so
the daemon's other clients are not held up; every file that changed between the
two is kept as it was before. A file that cannot
be kept is named in a notice: that change cannot be undone. So are turns of this
session whose checkpoints the store's cap dropped (`checkpoints.take_dropped`):
the session hears of them at its next turn's first event or write, whichever
project's writes pushed the store over. File names are quoted in notices
(`quoted`), so a name cannot start a line of its own.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import sqlite3
from pathlib import Path

from coding_harness.daemon.agent.seams import JSONObject
from coding_harness.daemon.sessions.session import Session
from coding_harness.daemon.store.checkpoints import BLOB_LIMIT
from coding_harness.daemon.store.workspace_read import NotReadable, read_regular
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
        self._asked_dropped = False  # whether this turn asked for dropped turns yet

    def before_event(self, kind: str, data: JSONObject) -> None:
        """Called before the event is published (and before the write it announces)."""
        if self._session.store is None:
            return
        if not self._asked_dropped:
            self._asked_dropped = True
            self._tell_dropped()
        if kind == WRITE_EVENT and data.get("phase") == STARTED:
            after = data.get("after")
            self._write(str(data.get("path", "")), after if isinstance(after, str) else None)

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
        self._tell_dropped()

    async def look_before(self) -> None:
        if self._session.store is None:
            return
        if self._snapshot is None:
            self._snapshot = WorkspaceSnapshot(self._session.cwd)
        await asyncio.to_thread(self._snapshot.refresh)
        self._before = self._snapshot.current()

    async def look_after(self) -> None:
        if self._snapshot is None or self._before is None:
            return
        await asyncio.to_thread(self._snapshot.refresh)
        changes = self._snapshot.changes(self._before)
        self._before = None
        kept = [change.path for change in changes if await self._command_change(change)]
        if kept:
            self._announce(kept)
        if changes:
            self._tell_dropped()

    async def _command_change(self, change: Change) -> bool:
        store = self._session.store
        assert store is not None
        try:
            after = await asyncio.to_thread(_digest_of, self._session.cwd, change.path)
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
                project=str(self._session.cwd),
                restorable=restorable,
            )
        except (OSError, sqlite3.Error) as exc:
            self._not_kept(change.path, exc)
            return False

    def _announce(self, files: list[str]) -> None:
        self._session.emit(EventKind.CHECKPOINT, {"turn": self._turn, "files": files})

    def _not_kept(self, rel: str, exc: BaseException) -> None:
        log.warning("no checkpoint of %r: %s", rel, exc)
        message = f"{quoted(rel)} could not be checkpointed ({exc}); this change cannot be undone"
        self._session.emit(EventKind.NOTICE, {"message": message})

    def _tell_dropped(self) -> None:
        """A notice naming this session's turns whose checkpoints the cap dropped."""
        store = self._session.store
        if store is None:
            return
        try:
            turns = store.checkpoints.take_dropped(self._session.id)
        except sqlite3.Error as exc:
            log.warning("dropped checkpoints could not be read (%s)", exc)
            return
        if turns:
            cap = store.checkpoints.cap_bytes
            shown = f"{cap // 2**20} MiB" if cap >= 2**20 else f"{cap:,} bytes"
            message = (
                f"the checkpoint store went over its cap ({shown}): the checkpoints of "
                f"turn {', '.join(turns)} were dropped; `harness undo` cannot put back "
                "what those turns changed"
            )
            self._session.emit(EventKind.NOTICE, {"message": message})


def quoted(name: str) -> str:
    """A file name as JSON quotes it: a newline or escape in it stays on this line."""
    return json.dumps(name, ensure_ascii=False)


def _digest_of(root: Path, rel: str) -> str | None:
    """The file's SHA-256 (None: no file; "": too large, or nothing a checkpoint reads:
    a symlink, a FIFO; undo then refuses to write over it without --force)."""
    try:
        found = read_regular(root, rel, BLOB_LIMIT)
    except NotReadable:
        return ""
    return None if found is None else hashlib.sha256(found[0]).hexdigest()
