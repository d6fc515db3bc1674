"""Undo: put back every file a turn and every later turn wrote, newest first.

From the session's checkpoints (`store/checkpoints.py`) the span is the turn
asked for (the agent's last one by default) and every later turn of the agent
not undone yet; an undo's own checkpoint (`undo-N`) is undone only by name. Each
path goes back to what the earliest turn of the span found (its bytes and mode,
or no file at all), but only when the disk still holds what the agent's last
write left there: a file someone else changed since is skipped, naming why,
unless `force`. What is put back is itself checkpointed as the turn `undo-N`, so
an undo can be undone. A path that leads out of the workspace now (a folder
swapped for a symlink) is never written, and files are read without following
a symlink (`store/workspace_read.py`). The conversation gets a note for the
next turn, so the model does not assume its edits are still there; the file
names in it are JSON-quoted, so a name holding a newline or an escape cannot
start a line of its own in the model's next message. A turn whose checkpoints
the store's cap dropped is named as such.
"""

from __future__ import annotations

import contextlib
import json
import stat
from dataclasses import dataclass, field
from pathlib import Path

from coding_harness.daemon.store.checkpoints import (
    Checkpoint,
    CheckpointStore,
    read_state,
    sha256,
)
from coding_harness.daemon.tools.edit.diff import unified_diff
from coding_harness.daemon.tools.edit.writes import replace_bytes

UNDO_PREFIX = "undo-"
CHANGED = "changed since the agent wrote it; --force puts it back anyway"
NOT_KEPT = "a command changed it, and it was too large to keep beforehand: not restorable"


class NothingToUndo(ValueError):
    """The session has no checkpoint (left), or not of the turn asked for."""


@dataclass(kw_only=True, slots=True)
class UndoResult:
    turn: str  # the earliest turn of the span
    undo_turn: str  # the checkpoint that undoes this undo
    restored: list[str] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    diffs: list[dict[str, str]] = field(default_factory=list)

    def note(self) -> str:
        """What the model is told at the start of its next turn."""
        files = ", ".join(json.dumps(path, ensure_ascii=False) for path in self.restored)
        return (
            f"[Note: the user undid the file changes of turn {self.turn} and later turns: "
            f"{files} are back as they were before; your edits to them are gone.]\n\n"
        )


def undo(
    checkpoints: CheckpointStore, session: str, root: Path, turn: str | None, force: bool
) -> UndoResult:
    rows = checkpoints.of_session(session)
    order = list(dict.fromkeys(row.turn for row in rows))
    dropped = checkpoints.dropped(session)
    if turn in dropped or (not order and dropped):
        raise NothingToUndo(
            f"the checkpoints of turn {turn or ', '.join(dropped)} were dropped when the "
            "checkpoint store went over its cap: that turn cannot be undone"
        )
    if not order:
        raise NothingToUndo("nothing to undo: no turn of this session wrote a file")
    agent_turns = [t for t in order if not t.startswith(UNDO_PREFIX)]
    target = turn or (agent_turns[-1] if agent_turns else order[-1])
    if target not in order:
        raise NothingToUndo(
            f"no checkpoint of turn {target} to undo (`harness undo --list` shows them)"
        )
    if target.startswith(UNDO_PREFIX):  # undoing an undo: that one alone
        span = [target]
    else:
        span = [t for t in order[order.index(target) :] if not t.startswith(UNDO_PREFIX)]
    result = UndoResult(turn=target, undo_turn=_next_undo_turn(checkpoints, session))
    earliest: dict[str, Checkpoint] = {}
    newest: dict[str, Checkpoint] = {}
    for row in rows:
        if row.turn in span:
            earliest.setdefault(row.path, row)
            newest[row.path] = row
    for path, first in earliest.items():
        _put_back(checkpoints, root, first, newest[path].after, force, result)
    checkpoints.mark_undone(session, span, result.restored)
    return result


def _put_back(
    checkpoints: CheckpointStore,
    root: Path,
    first: Checkpoint,
    expected: str | None,
    force: bool,
    result: UndoResult,
) -> None:
    path = first.path
    target = root / path
    if not first.restorable:
        result.skipped.append({"path": path, "reason": NOT_KEPT})
        return
    if not _inside(root, target):
        result.skipped.append({"path": path, "reason": "it now leads out of the workspace"})
        return
    try:
        current, _mode = read_state(root, path)
    except OSError as exc:
        result.skipped.append({"path": path, "reason": f"cannot be read now: {exc}"})
        return
    if sha256(current) != expected and not force:
        result.skipped.append({"path": path, "reason": CHANGED})
        return
    try:
        old = checkpoints.read_blob(first.blob) if first.blob is not None else None
    except OSError as exc:
        result.skipped.append({"path": path, "reason": f"its checkpoint cannot be read: {exc}"})
        return
    checkpoints.take(first.session, result.undo_turn, root, path, after=sha256(old))
    _restore(target, old, first.mode)
    result.restored.append(path)
    result.diffs.append({"path": path, "diff": _diff(current, old, path)})


def _restore(target: Path, data: bytes | None, mode: int | None) -> None:
    """Put `data` (None: no file) at `target` in one step."""
    if data is None:
        with contextlib.suppress(FileNotFoundError):
            target.unlink()
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    replace_bytes(target, data, mode=mode if mode is not None else 0o644)


def _inside(root: Path, target: Path) -> bool:
    """Whether writing `target` stays in the workspace (no symlink on the way out)."""
    real_root = root.resolve()
    parent = target.parent.resolve()
    if parent != real_root and real_root not in parent.parents:
        return False
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISLNK(target.lstat().st_mode):
            return False
    return True


def _diff(current: bytes | None, old: bytes | None, path: str) -> str:
    try:
        before = (current or b"").decode("utf-8")
        after = (old or b"").decode("utf-8")
    except UnicodeDecodeError:
        return f"(binary content of {path} put back)"
    return unified_diff(before, after, path)


def _next_undo_turn(checkpoints: CheckpointStore, session: str) -> str:
    done = {
        row.turn
        for row in checkpoints.of_session(session, undone=True)
        if row.turn.startswith(UNDO_PREFIX)
    }
    return f"{UNDO_PREFIX}{len(done) + 1}"
