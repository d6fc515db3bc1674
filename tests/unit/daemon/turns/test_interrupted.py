"""Crash windows of an edit, replayed deterministically through a real store and restore.

Each case leaves the store and the workspace as `kill -9` would at one point
of a journaled write (before the rename, after it, after the journal said
done), then restores the sessions as a restarted daemon does. The history's
note for the interrupted call says what the disk holds, and a temporary file
the crash left is removed; nothing else is touched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from coding_harness.daemon.sessions.session import SessionTable
from coding_harness.daemon.store.db import Store
from coding_harness.daemon.store.restore import RESTART_NOTE, restore_sessions
from coding_harness.daemon.tools.edit.journal import digest

OLD, NEW = "def add(a, b):\n    return a - b\n", "def add(a, b):\n    return a + b\n"
TEMP = ".harness-0123456789ab.tmp"


def crashed_store(
    tmp_path: Path, journal: list[dict[str, Any]], *, before: str | None = OLD
) -> tuple[Store, Path]:
    """A store holding a turn that died inside propose_edit of calc.py."""
    workspace = tmp_path / "proj"
    workspace.mkdir()
    store = Store(tmp_path / "state" / "sessions.db")
    store.create_session(id="s1", cwd=str(workspace), provider=None, model=None, created_at=0.0)
    call = {"id": "c1", "type": "function", "function": {"name": "propose_edit", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "fix add"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
    ]
    started = {
        "id": "w-1",
        "path": "calc.py",
        "temp": TEMP,
        "before": digest(before),
        "after": digest(NEW),
        "phase": "started",
    }
    events = [
        (1, "turn.started", {"turn": "t1", "text": "fix add"}, 1.0),
        (2, "tool.call", {"id": "c1", "name": "propose_edit", "arguments": "{}"}, 1.0),
        *[(3 + i, "edit.write", {**started, **e}, 1.0) for i, e in enumerate(journal)],
    ]
    store.turn_started("s1", "t1", "fix add")
    store.record_step("s1", first_index=0, messages=messages, events=events)
    return store, workspace


def restart(store: Store) -> tuple[str, dict[str, Any]]:
    """Restore as a new daemon would; the interrupted call's result and the turn's end."""
    table = SessionTable()
    assert restore_sessions(store, table, 1000) == 1
    session = table.get("s1")
    assert session is not None
    [result] = [m for m in session.history if m["role"] == "tool"]
    [finished] = [e.data for e in session.events if e.kind == "turn.finished"]
    return str(result["content"]), finished


def test_killed_before_the_rename_the_edit_is_not_applied_and_the_temp_file_goes(
    tmp_path: Path,
) -> None:
    store, workspace = crashed_store(tmp_path, [{}])
    (workspace / "calc.py").write_text(OLD)
    (workspace / TEMP).write_text(NEW[:10])  # half written when the daemon died
    note, finished = restart(store)
    assert note.startswith(RESTART_NOTE)
    assert "The edit to 'calc.py' was not applied: the file holds its previous text." in note
    assert not (workspace / TEMP).exists()
    assert (workspace / "calc.py").read_text() == OLD
    assert finished["files_changed"] == [] and finished["interrupted"] is True


@pytest.mark.parametrize("journal", [[{}], [{}, {"phase": "done"}]], ids=["renamed", "done"])
def test_killed_after_the_rename_the_edit_is_reported_written(
    tmp_path: Path, journal: list[dict[str, Any]]
) -> None:
    store, workspace = crashed_store(tmp_path, journal)
    (workspace / "calc.py").write_text(NEW)
    note, finished = restart(store)
    assert "The edit to 'calc.py' had been written: the file holds the new text." in note
    assert finished["files_changed"] == ["calc.py"]


def test_a_new_file_that_never_appeared_is_reported_not_created(tmp_path: Path) -> None:
    store, workspace = crashed_store(tmp_path, [{}], before=None)
    note, _ = restart(store)
    assert "The edit was not applied: 'calc.py' was not created." in note
    assert not (workspace / "calc.py").exists()


def test_a_file_changed_by_someone_else_is_reported_as_such(tmp_path: Path) -> None:
    store, workspace = crashed_store(tmp_path, [{}])
    (workspace / "calc.py").write_text("something else\n")
    note, finished = restart(store)
    assert "holds neither its previous text nor the edit's" in note
    assert finished["files_changed"] == []


@pytest.mark.parametrize(
    "temp", ["notes.txt", "../outside.tmp", "sub/../../x/.harness-0123456789ab.tmp"]
)
def test_only_our_own_temporary_files_inside_the_workspace_are_removed(
    tmp_path: Path, temp: str
) -> None:
    store, workspace = crashed_store(tmp_path, [{"temp": temp}])
    (workspace / "calc.py").write_text(OLD)
    (workspace / "notes.txt").write_text("keep me\n")
    (tmp_path / "outside.tmp").write_text("keep me\n")
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / TEMP).write_text("keep me\n")
    restart(store)
    assert (workspace / "notes.txt").read_text() == "keep me\n"
    assert (tmp_path / "outside.tmp").read_text() == "keep me\n"
    assert (tmp_path / "x" / TEMP).read_text() == "keep me\n"
