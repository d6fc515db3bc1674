"""`/memory` against answers it cannot trust, and an editor command it cannot split."""

from __future__ import annotations

import io
from typing import Any

import pytest

from coding_harness.client.render.style import Style
from coding_harness.client.repl.memory_command import MemoryCommand
from coding_harness.client.repl.memory_edit import EditFailed, editor_command


class Answers:
    """A connection's `request` that answers `memory.get` with `notes` and records
    what `memory.set` was sent."""

    def __init__(self, notes: object) -> None:
        self.notes = notes
        self.sent: list[dict[str, Any]] = []

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "memory.set":
            self.sent.append(params)
            return {"saved": True, "notes": []}
        return {"notes": self.notes}


def run(notes: object, argument: str) -> tuple[Answers, str]:
    conn, err = Answers(notes), io.StringIO()
    command = MemoryCommand(conn, "s-1", Style(err))  # type: ignore[arg-type]
    command(argument)
    return conn, err.getvalue()


def test_notes_without_an_id_are_neither_shown_nor_removed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    notes = [{"text": "no id"}, "not a note", {"id": 7, "kind": "fact", "text": "kept"}]
    run(notes, "")
    shown = capsys.readouterr().out
    assert "kept" in shown and "no id" not in shown
    conn, _ = run(notes, "rm 1")
    assert conn.sent == [{"session": "s-1", "remove": [7]}]


@pytest.mark.parametrize("notes", [None, "text", {"id": 1}, [[1]]])
def test_an_answer_that_is_not_a_list_of_notes_lists_none(
    notes: object, capsys: pytest.CaptureFixture[str]
) -> None:
    _, err = run(notes, "")
    assert "no notes" in err


def test_an_editor_command_a_shell_could_not_split_is_a_clear_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("VISUAL", "vim '")
    with pytest.raises(EditFailed, match="cannot read the editor command"):
        editor_command()
