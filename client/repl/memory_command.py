"""`/memory`: the project's notes from earlier turns, shown and edited in the REPL.

`/memory` lists them numbered (oldest first, as `memory.get` gives them);
`/memory rm N [N ...]` removes by number, `/memory clear` removes them all,
`/memory add TEXT` keeps a note of your own, `/memory edit` opens them in
$VISUAL or $EDITOR (`memory_edit.py`). Numbers are those of the last
listing, asked afresh each time, so they match what was shown. Anything else
gets the usage line; the notes are text from a model, shown with control
characters made visible.
"""

from __future__ import annotations

from typing import Any

from coding_harness.client.render.sanitize import one_line, visible
from coding_harness.client.repl.session_command import SessionCommand
from coding_harness.protocol import methods

USAGE = "usage: /memory [rm N ...|clear|add TEXT|edit]"


class MemoryCommand(SessionCommand):
    def __call__(self, argument: str) -> None:
        verb, _, rest = argument.partition(" ")
        rest = rest.strip()
        if not verb:
            self._show(self._notes())
        elif verb == "add" and rest:
            self._set({"notes": [{"kind": "fact", "text": rest}]}, "noted")
        elif verb == "clear" and not rest:
            self._set({"clear": True}, "notes cleared")
        elif verb == "rm" and rest:
            self._remove(rest.split())
        elif verb == "edit" and not rest:
            self._edit()
        else:
            self.style.line(USAGE, "yellow")

    def _notes(self) -> list[dict[str, Any]]:
        answer = self.conn.request(methods.MEMORY_GET, {"session": self.session})
        notes = answer.get("notes") if isinstance(answer, dict) else None
        if not isinstance(notes, list):
            return []
        return [n for n in notes if isinstance(n, dict) and isinstance(n.get("id"), int | str)]

    def _show(self, notes: list[dict[str, Any]]) -> None:
        if not notes:
            self.style.line(
                "no notes for this project yet: they are taken after coding turns", "dim"
            )
            return
        for number, note in enumerate(notes, 1):
            kind = one_line(str(note.get("kind", "")), 10)
            print(visible(f"{number:>3}. [{kind}] {note.get('text', '')}"))

    def _remove(self, words: list[str]) -> None:
        notes = self._notes()
        if not all(_number(w) and 1 <= int(w) <= len(notes) for w in words):
            shown = one_line(" ".join(words), 40)
            self.style.line(
                f"/memory rm {shown}: give note numbers from 1 to {len(notes)} "
                "(/memory lists them)",
                "yellow",
            )
            return
        ids = sorted({notes[int(w) - 1]["id"] for w in words})
        self._set({"remove": ids}, f"removed {len(ids)} note(s)")

    def _edit(self) -> None:
        from coding_harness.client.repl.memory_edit import (
            EditFailed,
            changes,
            edit_lines,
            note_line,
        )

        notes = self._notes()
        try:
            edited = edit_lines([note_line(note) for note in notes])
        except EditFailed as exc:
            self.style.line(str(exc), "yellow")
            return
        change = changes(notes, edited)
        if not change:
            self.style.line("no change", "dim")
            return
        self._set(change, "notes updated")

    def _set(self, change: dict[str, Any], done: str) -> None:
        answer = self.conn.request(methods.MEMORY_SET, {"session": self.session, **change})
        left = len(answer.get("notes") or [])
        pending = "" if answer.get("saved", True) else " (written once the disk has room)"
        self.style.line(f"{done}; {left} note(s) kept for this project{pending}", "dim")


def _number(word: str) -> bool:
    return word.isascii() and word.isdigit() and len(word) <= 6
