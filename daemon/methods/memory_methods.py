"""`memory.get` and `memory.set`: a project's turn-close notes, shown and edited.

A project is named by a session (its workspace) or by `cwd`, and keyed by the
folder's real path. `memory.set` adds notes (each a string, or `{kind, text}`
with kind decision, fact or todo), removes some by id, or clears them all;
added notes go through the same curation as the model's (`notes_curator.py`:
cleaned, redacted, deduplicated, capped). The answer of both is the
project's notes as they are then (`memory.set` adds `saved`, false while the
disk refuses the write, which is then kept and made once it has room). A
process started by one of the agent's own tools may read them but not change
them, so a model cannot plant notes for later sessions through a tool.
"""

from __future__ import annotations

import os
import sqlite3
from typing import Any

from coding_harness.daemon.context.notes_curator import MAX_NOTES, NOTE_KINDS, Redact
from coding_harness.daemon.methods.lookup import session_of
from coding_harness.daemon.methods.params import (
    refuse_tool_children,
    text,
    valid_text,
    workspace_folder,
)
from coding_harness.daemon.methods.parts import MethodParts
from coding_harness.daemon.security.secrets import collect_secrets
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.server.rpc import Handler
from coding_harness.daemon.turns.assemble import session_secrets
from coding_harness.protocol import errors
from coding_harness.protocol import methods as m

MAX_IDS = 1000


def _project(parts: MethodParts, session: Any, cwd: Any) -> tuple[str, Redact]:
    """The project's key and how its notes are redacted, from a session or a folder."""
    if session is not None:
        target = session_of(parts, session)
        config = parts.configs.get(target.cwd)
        return str(target.cwd), session_secrets(target, config).redact
    if cwd is None:
        raise errors.InvalidParams("memory needs a session or a cwd")
    folder = workspace_folder(text("cwd", cwd))
    names = parts.configs.get(folder).key_env_names()
    return str(folder), collect_secrets(names, os.environ).redact


def _answer(parts: MethodParts, project: str) -> dict[str, Any]:
    notes = parts.store().notes.read(project)
    return {"project": project, "notes": [note.to_wire() for note in notes]}


def _new_notes(value: Any) -> list[tuple[str, str]]:
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > MAX_NOTES:
        raise errors.InvalidParams(f"notes must be a list of at most {MAX_NOTES} notes")
    return [_one_note(i, item) for i, item in enumerate(value)]


def _one_note(index: int, item: Any) -> tuple[str, str]:
    where = f"notes[{index}]"
    if isinstance(item, str):
        return "fact", valid_text(where, item)
    if not isinstance(item, dict) or not isinstance(item.get("text"), str):
        raise errors.InvalidParams(f"{where} must be a string or {{kind, text}}")
    kind = item.get("kind", "fact")
    if kind not in NOTE_KINDS:
        raise errors.InvalidParams(f"{where}.kind must be one of {', '.join(NOTE_KINDS)}")
    return str(kind), valid_text(f"{where}.text", item["text"])


def _ids(value: Any) -> list[int]:
    if value is None:
        return []
    if (
        not isinstance(value, list)
        or len(value) > MAX_IDS
        or not all(isinstance(i, int) and not isinstance(i, bool) for i in value)
    ):
        raise errors.InvalidParams("remove must be a list of note ids (whole numbers)")
    return list(value)


async def memory_get(
    parts: MethodParts, conn: Connection, session: Any = None, cwd: Any = None
) -> dict[str, Any]:
    project, _ = _project(parts, session, cwd)
    return _answer(parts, project)


async def memory_set(
    parts: MethodParts,
    conn: Connection,
    session: Any = None,
    cwd: Any = None,
    notes: Any = None,
    remove: Any = None,
    clear: Any = False,
) -> dict[str, Any]:
    refuse_tool_children(conn)
    project, redact = _project(parts, session, cwd)
    added, gone = _new_notes(notes), _ids(remove)
    if not isinstance(clear, bool):
        raise errors.InvalidParams("clear must be true or false")
    store = parts.store()
    try:
        saved = True
        if clear or gone:
            saved = store.notes.remove(project, None if clear else gone)
        if added:
            saved = store.notes.add(project, added, redact) and saved
    except sqlite3.Error as exc:
        raise errors.InternalError(f"the notes could not be changed: {exc}") from None
    parts.turns.forget_notes(project)
    # Not saved: the disk refused; the change is kept and written once it has room.
    return {**_answer(parts, project), "saved": saved}


HANDLERS: dict[str, Handler] = {m.MEMORY_GET: memory_get, m.MEMORY_SET: memory_set}
