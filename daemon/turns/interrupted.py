"""What an interrupted turn left on disk, told to the model and the people.

A turn cut short (the daemon killed, or a cancel) leaves tool calls without
results, which `repair_dangling` answers with a note. When such a call was
writing a file, the write journal (`tools/journal.py`) among the turn's events
names the file and the hashes of its text before and after, and the disk
tells which one it holds: the note then says whether the edit is in place,
and a temporary file the write never got to rename is removed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from coding_harness.daemon.agent.history import answer_trailing_request, repair_dangling
from coding_harness.daemon.agent.seams import JSONObject
from coding_harness.daemon.tools.edit.journal import STARTED, WRITE_EVENT, WriteEntry, digest
from coding_harness.daemon.tools.edit.writes import MAX_EDIT_BYTES, TEMP_NAME
from coding_harness.protocol.methods import EventKind

log = logging.getLogger(__name__)

NEW, OLD, OTHER = "new", "old", "other"


def recover_writes(
    history: list[JSONObject],
    events: Iterable[tuple[str, JSONObject]],
    turn: str,
    root: Path,
    note: str,
) -> list[str]:
    """Answer dangling calls with `note`, plus what each call's writes left on disk,
    and a request the model never answered with `note` too.

    Removes temporary files of writes that never ended. Returns the files that
    hold what the turn's edits wrote."""
    repair_dangling(history, note)
    answer_trailing_request(history, note)
    entries = writes_in_turn(events, turn)
    if not entries:
        return []
    for entry in entries:
        if entry.phase == STARTED:
            _remove_temp(root, entry)
    firsts: dict[tuple[str, str], WriteEntry] = {}
    for entry in entries:
        firsts.setdefault((entry.call, entry.path), entry)
    states = {key: disk_state(root, entry) for key, entry in firsts.items()}
    notes: dict[str, list[str]] = {}
    for (call, path), state in states.items():
        notes.setdefault(call, []).append(_sentence(firsts[(call, path)], state))
    for message in history:
        said = notes.get(str(message.get("tool_call_id")))
        if message.get("role") == "tool" and said and message.get("content") == note:
            message["content"] = " ".join([note, *said])
    return [path for (_, path), state in states.items() if state == NEW]


def writes_in_turn(events: Iterable[tuple[str, JSONObject]], turn: str) -> list[WriteEntry]:
    """The writes journaled during `turn`, each with its tool call and last phase."""
    entries: dict[str, WriteEntry] = {}
    inside, call = False, ""
    for kind, data in events:
        if kind == EventKind.TURN_STARTED:
            inside = data.get("turn") == turn
        elif inside and kind == EventKind.TOOL_CALL:
            call = str(data.get("id", ""))
        elif inside and kind == WRITE_EVENT:
            write_id = str(data.get("id", ""))
            if write_id in entries:
                entries[write_id].phase = str(data.get("phase", ""))
            elif data.get("phase") == STARTED and isinstance(data.get("path"), str):
                entries[write_id] = WriteEntry(
                    id=write_id,
                    path=str(data["path"]),
                    temp=str(data.get("temp") or ""),
                    before=_optional(data.get("before")),
                    after=_optional(data.get("after")),
                    call=call,
                )
    return list(entries.values())


def disk_state(root: Path, entry: WriteEntry) -> str:
    """NEW when the file holds what the write meant to leave, OLD when it holds what was
    there before, OTHER when neither (or it cannot be read)."""
    now = _digest_of(_inside(root, entry.path))
    if now == entry.after:
        return NEW
    if now == entry.before:
        return OLD
    return OTHER


def _sentence(entry: WriteEntry, state: str) -> str:
    path = entry.path
    if state == NEW:
        if entry.after is None:
            return f"'{path}' had been deleted before it stopped."
        return f"The edit to '{path}' had been written: the file holds the new text."
    if state == OLD:
        if entry.before is None:
            return f"The edit was not applied: '{path}' was not created."
        return f"The edit to '{path}' was not applied: the file holds its previous text."
    return f"'{path}' holds neither its previous text nor the edit's: read it before changing it."


def _optional(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _inside(root: Path, rel: str) -> Path | None:
    """`root/rel`, or None when that leads out of the workspace."""
    base = root.resolve()
    path = (base / rel).resolve()
    return path if path.is_relative_to(base) else None


def _digest_of(path: Path | None) -> str | None:
    """The SHA-256 of the file's bytes; None when there is no file; "" when unreadable."""
    if path is None:
        return ""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_EDIT_BYTES:
            return ""
        return digest(path.read_bytes()) or ""
    except FileNotFoundError:
        return None
    except OSError:
        return ""


def _remove_temp(root: Path, entry: WriteEntry) -> None:
    """Delete the temporary file a write that never ended may have left."""
    name = PurePosixPath(entry.temp).name
    if not TEMP_NAME.fullmatch(name):
        return
    folder = _inside(root, str(PurePosixPath(entry.temp).parent))
    if folder is None:
        return
    temp = folder / name
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISREG(os.lstat(temp).st_mode):
            temp.unlink()
            log.info("removed %s, left by a write that was interrupted", temp)
