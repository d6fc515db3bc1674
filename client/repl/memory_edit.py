"""`/memory edit`: the project's notes in $VISUAL or $EDITOR, one per line.

The notes are written to a private temporary file as `kind: text` lines under
a comment saying how; the editor runs in the terminal; when it exits 0 the
file is read back. A line that is gone removes its note, a new or changed line
adds one (a line without a known kind is a fact), and an unchanged note keeps
its place and age. The change goes through `memory.set`, so the daemon cleans
and curates what was typed as it does any note. An editor that cannot be
started, or exits with an error, changes nothing.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import Any

KINDS = ("decision", "fact", "todo")
HEADER = (
    "# The project's notes, one per line as KIND: TEXT (KIND is decision, fact or todo).\n"
    "# Delete a line to remove its note; add a line to add one. Lines starting with # are"
    " skipped.\n"
)


class EditFailed(Exception):
    """The editor could not be started or did not exit cleanly; the message says which."""


def editor_command() -> list[str]:
    """$VISUAL, else $EDITOR, else vi, split as a shell would; `EditFailed` for a
    value a shell could not split either (an unbalanced quote)."""
    chosen = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        return shlex.split(chosen) or ["vi"]
    except ValueError as exc:
        raise EditFailed(f"cannot read the editor command {chosen!r} ({exc})") from None


def edit_lines(lines: list[str]) -> list[str]:
    """`lines` as the person left them in the editor."""
    with tempfile.TemporaryDirectory(prefix="harness-memory-") as folder:
        path = Path(folder) / "notes.txt"
        path.write_text(HEADER + "".join(f"{line}\n" for line in lines), encoding="utf-8")
        command = [*editor_command(), str(path)]
        try:
            done = subprocess.run(command, check=False)
        except OSError as exc:
            raise EditFailed(f"cannot start the editor {command[0]!r} ({exc.strerror})") from None
        if done.returncode != 0:
            raise EditFailed(f"the editor exited with status {done.returncode}; nothing changed")
        text = path.read_text(encoding="utf-8", errors="replace")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def note_line(note: dict[str, Any]) -> str:
    return f"{note.get('kind', 'fact')}: {' '.join(str(note.get('text', '')).split())}"


def parse_line(line: str) -> dict[str, str]:
    kind, colon, text = line.partition(":")
    if colon and kind.strip() in KINDS and text.strip():
        return {"kind": kind.strip(), "text": text.strip()}
    return {"kind": "fact", "text": line}


def changes(notes: list[dict[str, Any]], edited: list[str]) -> dict[str, Any]:
    """The `memory.set` params that turn `notes` into the edited lines (empty: no change)."""
    before = {note_line(note): note["id"] for note in notes}
    remove = sorted(note_id for line, note_id in before.items() if line not in edited)
    added = [parse_line(line) for line in dict.fromkeys(edited) if line not in before]
    change: dict[str, Any] = {}
    if remove:
        change["remove"] = remove
    if added:
        change["notes"] = added
    return change
