"""Looking at the workspace before and after a command: what changed, and from what."""

from __future__ import annotations

from pathlib import Path

import pytest

from coding_harness.daemon.store import workspace_snapshot
from coding_harness.daemon.store.workspace_snapshot import TOO_LARGE, WorkspaceSnapshot


def test_changes_name_each_path_with_what_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(workspace_snapshot, "FILE_LIMIT", 100)
    (tmp_path / "kept.txt").write_text("before")
    (tmp_path / "gone.txt").write_text("bye")
    (tmp_path / "big.bin").write_bytes(b"x" * 500)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "index").write_text("a")
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "same.txt").write_text("same")
    snapshot = WorkspaceSnapshot(tmp_path)
    snapshot.refresh()
    before = snapshot.current()
    (tmp_path / "kept.txt").write_text("after!")
    (tmp_path / "gone.txt").unlink()
    (tmp_path / "big.bin").write_bytes(b"y" * 600)
    (tmp_path / "new.txt").write_text("hello")
    (tmp_path / ".git" / "index").write_text("changed")  # hidden: not looked at
    (tmp_path / "build" / "out.o").write_text("obj")  # ignored: not looked at
    snapshot.refresh()
    changes = {c.path: c.before for c in snapshot.changes(before)}
    assert changes == {
        "big.bin": TOO_LARGE,
        "gone.txt": b"bye",
        "kept.txt": b"before",
        "new.txt": None,
    }
