"""Looking at the workspace before and after a command: what changed, and from what."""

from __future__ import annotations

import os
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


def rewrite_keeping_size_and_mtime(path: Path, text: str) -> None:
    """What `printf ... > f; touch -r saved f` does: new bytes, same size, old mtime.
    The utime is repeated until the kernel's clock (coarse for ctime) has moved on, so
    the ctime differs however fast this machine is; the mtime stays the old one."""
    old = path.stat()
    assert len(text.encode()) == old.st_size
    path.write_text(text)
    os.utime(path, ns=(old.st_atime_ns, old.st_mtime_ns))
    while path.stat().st_ctime_ns == old.st_ctime_ns:
        os.utime(path, ns=(old.st_atime_ns, old.st_mtime_ns))


def test_a_rewrite_that_keeps_size_and_mtime_is_seen_by_its_ctime(tmp_path: Path) -> None:
    target = tmp_path / "config.py"
    target.write_text("DEBUG = False\n")
    snapshot = WorkspaceSnapshot(tmp_path)
    snapshot.refresh()
    before = snapshot.current()
    rewrite_keeping_size_and_mtime(target, "DEBUG = True!\n")
    assert target.stat().st_mtime_ns == before["config.py"].mtime_ns
    snapshot.refresh()
    assert [(c.path, c.before) for c in snapshot.changes(before)] == [
        ("config.py", b"DEBUG = False\n")
    ]


def test_a_file_replaced_by_a_rename_is_seen_by_its_inode(tmp_path: Path) -> None:
    target = tmp_path / "data.txt"
    target.write_text("one\n")
    snapshot = WorkspaceSnapshot(tmp_path)
    snapshot.refresh()
    before = snapshot.current()
    old = target.stat()
    replacement = tmp_path / ".new"
    replacement.write_text("two\n")
    os.utime(replacement, ns=(old.st_atime_ns, old.st_mtime_ns))
    replacement.replace(target)
    snapshot.refresh()
    assert [(c.path, c.before) for c in snapshot.changes(before)] == [("data.txt", b"one\n")]


def test_a_touch_that_changes_no_byte_is_no_change(tmp_path: Path) -> None:
    (tmp_path / "same.txt").write_text("same")
    snapshot = WorkspaceSnapshot(tmp_path)
    snapshot.refresh()
    before = snapshot.current()
    os.utime(tmp_path / "same.txt", ns=(1, 1))
    snapshot.refresh()
    assert snapshot.changes(before) == []


def test_a_folder_or_file_swapped_for_a_symlink_is_not_followed_out(tmp_path: Path) -> None:
    root, outside = tmp_path / "w", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "id_rsa").write_text("secret")
    (root / "src").mkdir()
    (root / "src" / "a.py").write_text("a")
    (root / "b.py").write_text("b")
    snapshot = WorkspaceSnapshot(root)
    snapshot.refresh()
    before = snapshot.current()
    (root / "src" / "a.py").unlink()
    (root / "src").rmdir()
    (root / "src").symlink_to(outside)
    (root / "b.py").unlink()
    (root / "b.py").symlink_to(outside / "id_rsa")
    snapshot.refresh()
    assert all(seen.data != b"secret" for seen in snapshot.current().values())
    assert {c.path: c.before for c in snapshot.changes(before)} == {"b.py": b"b", "src/a.py": b"a"}


def test_nested_ignore_files_and_bytecode_caches_are_not_looked_at(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / ".gitignore").write_text("_build/\n*.log\n!keep.log\n")
    (tmp_path / "calc.py").write_text("x = 1\n")
    snapshot = WorkspaceSnapshot(tmp_path)
    snapshot.refresh()
    before = snapshot.current()
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "calc.cpython-311.pyc").write_bytes(b"\0")
    (tmp_path / "old.pyc").write_bytes(b"\0")
    (tmp_path / "docs" / "_build").mkdir()
    (tmp_path / "docs" / "_build" / "index.html").write_text("html")
    (tmp_path / "docs" / "run.log").write_text("log")
    (tmp_path / "docs" / "keep.log").write_text("kept")
    (tmp_path / "calc.py").write_text("x = 2\n")
    snapshot.refresh()
    assert [c.path for c in snapshot.changes(before)] == ["calc.py", "docs/keep.log"]
