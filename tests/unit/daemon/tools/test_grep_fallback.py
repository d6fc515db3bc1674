"""grep's Python fallback (`grep_fallback.py`), forced with `use_ripgrep=False`, against
ripgrep on the same trees; the child it runs in is stopped at the time limit."""

from __future__ import annotations

import os
from pathlib import Path

import psutil
import pytest

from coding_harness.daemon.tools import code_search
from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.workspace import Workspace
from tests.support.tool_context import build_project, run

NOTE = "[ripgrep ('rg') is missing"


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    root = build_project(tmp_path)
    files = {
        "src/util.py": "import os\ndef main_helper():\n    return 'TODO'\n",
        "src/gen/made.py": "def generated(): pass\n",
        "a-b/x.py": "def dashed(): pass\n",
        "a/x.py": "def slashed(): pass\n",
        "build/out.py": "def built(): pass\n",
        "dos.txt": "def crlf():\r\n",
        "blob.bin": "def binary():\x00\n",
        "wide.txt": "def " + "y" * 5000 + "\n",
        "src/skip.tmp": "def skipped(): pass\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / ".gitignore").write_text("build/\n")
    (root / "src" / ".gitignore").write_text("/gen/\n*.tmp\n!keep.tmp\n")
    (root / "build" / "alias.py").symlink_to("../a/x.py")
    (root / "src" / "alias.py").symlink_to("../a/x.py")
    return Workspace(root)


def grep(workspace: Workspace, pattern: str, path: str, **options: object) -> str:
    return run(code_search.grep(workspace, pattern, path, **options))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("pattern", "path"),
    [
        (r"def \w+", "."),
        (r"^def crlf\(\):$", "dos.txt"),
        ("def", "src"),
        ("def", "build"),  # named: searched though ignored
        ("def", "src/skip.tmp"),
        ("zzz", "."),
    ],
)
def test_the_fallback_finds_what_ripgrep_finds(
    workspace: Workspace, pattern: str, path: str
) -> None:
    by_ripgrep = grep(workspace, pattern, path, use_ripgrep=True)
    by_python = grep(workspace, pattern, path, use_ripgrep=False)
    shown, note = by_python.rsplit("\n", 1)
    assert shown == by_ripgrep
    assert note.startswith(NOTE)
    assert by_python.count(NOTE) == 1


def test_the_fallback_obeys_nested_ignore_files(workspace: Workspace) -> None:
    lines = grep(workspace, "def", ".", use_ripgrep=False).splitlines()
    assert "src/util.py:2:def main_helper():" in lines
    assert "src/alias.py:1:def slashed(): pass" in lines
    for left_out in ("build/", "src/gen/", "src/skip.tmp", "blob.bin", "SECRET"):
        assert not [line for line in lines if left_out in line]


def test_a_pattern_python_backtracks_on_is_stopped_at_the_time_limit(
    workspace: Workspace,
) -> None:
    (workspace.root / "a.txt").write_text("a" * 40 + "\n")
    result = grep(workspace, "(a*)*b", "a.txt", time_limit=1.0, use_ripgrep=False)
    lines = result.splitlines()
    assert lines[0] == "search timed out after 1 s; narrow the path or simplify the pattern"
    assert lines[1].startswith(NOTE)
    assert not [
        child
        for child in psutil.Process(os.getpid()).children(recursive=True)
        if child.status() != psutil.STATUS_ZOMBIE
    ]


def test_a_pattern_python_cannot_read_is_refused_clearly(workspace: Workspace) -> None:
    with pytest.raises(ToolRefusal, match=r"invalid regular expression '\(unclosed'.*missing \)"):
        grep(workspace, "(unclosed", ".", use_ripgrep=False)


def test_the_fallback_cuts_long_lines_as_ripgrep_does(workspace: Workspace) -> None:
    result = grep(workspace, "def y", "wide.txt", use_ripgrep=False).splitlines()
    assert result[0].startswith("wide.txt:1:def yyy")
    assert result[0].endswith("[more characters not shown: a very long line]")
