"""read_file, list_dir and grep on a real temporary workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from coding_harness.daemon.tools import files
from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.workspace import Workspace
from tests.unit.test_tools_support import build_project


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


def test_grep_prints_workspace_relative_matches(workspace: Workspace) -> None:
    (workspace.root / "src" / "util.py").write_text("import os\ndef main_helper():\n    pass\n")
    result = files.grep(workspace, r"def \w+\(", ".")
    assert result.splitlines() == ["src/app.py:1:def main():", "src/util.py:2:def main_helper():"]
    assert files.grep(workspace, "return (4|5)2", "src/app.py") == "src/app.py:2:    return 42"


def test_grep_skips_binary_fifo_and_symlinked_folders(workspace: Workspace) -> None:
    root = workspace.root
    (root / "blob.bin").write_bytes(b"needle\x00\xff")
    os.mkfifo(root / "src" / "pipe")  # opening it for reading would block
    (root / "srclink").symlink_to("src", target_is_directory=True)
    (root / "src" / "needle.txt").write_text("a needle here\n")
    (root / "alias.txt").symlink_to("src/needle.txt")
    result = files.grep(workspace, "needle", ".")
    assert result.splitlines() == ["alias.txt:1:a needle here", "src/needle.txt:1:a needle here"]


def test_grep_reports_bad_regex_and_no_match(workspace: Workspace) -> None:
    with pytest.raises(ToolRefusal, match="invalid regular expression"):
        files.grep(workspace, "(unclosed", ".")
    assert files.grep(workspace, "zzz-not-there", "src").startswith("no matches")
    with pytest.raises(ToolRefusal, match="does not exist"):
        files.grep(workspace, "x", "nope")


def test_grep_caps_matches_and_long_lines(workspace: Workspace) -> None:
    (workspace.root / "many.txt").write_text("hit\n" * (files.GREP_MAX_MATCHES + 50))
    (workspace.root / "wide.txt").write_text("hit" + "y" * 2000 + "\n")
    result = files.grep(workspace, "hit", "many.txt").splitlines()
    assert len(result) == files.GREP_MAX_MATCHES + 1
    assert "stopped after 500 matches" in result[-1]
    wide = files.grep(workspace, "hit", "wide.txt")
    assert len(wide) < 700
    assert "more characters" in wide


def test_grep_matches_no_phantom_last_line(workspace: Workspace) -> None:
    (workspace.root / "two.txt").write_text("a\nb\n")
    assert files.grep(workspace, "^$", "two.txt").startswith("no matches")
