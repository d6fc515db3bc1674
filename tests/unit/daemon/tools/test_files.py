"""read_file and list_dir on a real temporary workspace (grep: test_code_search.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from coding_harness.daemon.tools import files
from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.workspace import Workspace
from tests.support.tool_context import build_project


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return Workspace(build_project(tmp_path))


def test_read_file_returns_the_text(workspace: Workspace) -> None:
    assert files.read_file(workspace, "src/app.py") == "def main():\n    return 42\n"


def test_read_file_keeps_crlf_and_follows_inside_symlinks(workspace: Workspace) -> None:
    (workspace.root / "dos.txt").write_bytes(b"a\r\nb\r\n")
    (workspace.root / "alias.py").symlink_to("src/app.py")
    assert files.read_file(workspace, "dos.txt") == "a\r\nb\r\n"
    assert files.read_file(workspace, "alias.py").startswith("def main")


def test_read_file_refusals(workspace: Workspace) -> None:
    root = workspace.root
    (root / "blob.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff")
    (root / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    os.mkfifo(root / "pipe")
    cases = {
        "src": "is a folder",
        "missing.py": "does not exist",
        "blob.bin": "not UTF-8 text",
        "latin1.txt": "not UTF-8 text",
        "pipe": "named pipe",
    }
    for path, fragment in cases.items():
        with pytest.raises(ToolRefusal, match=fragment):
            files.read_file(workspace, path)


def test_read_file_caps_long_files(workspace: Workspace) -> None:
    (workspace.root / "big.txt").write_text("x" * (files.READ_CAP_CHARS + 10))
    text = files.read_file(workspace, "big.txt")
    assert text.startswith("x" * 1000)
    assert f"first {files.READ_CAP_CHARS} characters of {files.READ_CAP_CHARS + 10}" in text


def test_read_file_says_when_a_file_is_empty(workspace: Workspace) -> None:
    (workspace.root / "empty.py").write_text("")
    assert "is empty" in files.read_file(workspace, "empty.py")


def test_list_dir_sorts_marks_folders_and_hides(workspace: Workspace) -> None:
    (workspace.root / "src" / "b.py").write_text("")
    (workspace.root / "src" / "pkg").mkdir()
    (workspace.root / "src" / ".cache").mkdir()
    (workspace.root / "src" / "a.py~").write_text("")
    assert files.list_dir(workspace, "src") == "app.py\nb.py\npkg/"


def test_list_dir_refusals_and_empty(workspace: Workspace) -> None:
    with pytest.raises(ToolRefusal, match="is a file"):
        files.list_dir(workspace, "README.md")
    with pytest.raises(ToolRefusal, match="does not exist"):
        files.list_dir(workspace, "nope")
    (workspace.root / "void").mkdir()
    assert "is empty" in files.list_dir(workspace, "void")


def test_list_dir_caps_entries(workspace: Workspace) -> None:
    many = workspace.root / "many"
    many.mkdir()
    for index in range(files.LIST_CAP_ENTRIES + 5):
        (many / f"f{index:05d}").touch()
    lines = files.list_dir(workspace, "many").splitlines()
    assert len(lines) == files.LIST_CAP_ENTRIES + 1
    assert "5 more entries" in lines[-1]


def test_list_dir_notes_a_symlink_loop_and_lists_the_rest(workspace: Workspace) -> None:
    src = workspace.root / "src"
    (src / "loop").symlink_to("loop")
    (src / "ping").symlink_to("pong")
    (src / "pong").symlink_to("ping")
    (src / "pkg").mkdir()
    assert files.list_dir(workspace, "src").splitlines() == [
        "app.py",
        "loop (a symlink loop: it leads nowhere)",
        "ping (a symlink loop: it leads nowhere)",
        "pkg/",
        "pong (a symlink loop: it leads nowhere)",
    ]
