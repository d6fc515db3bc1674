"""grep (`code_search.py`) on a real temporary workspace, with the real ripgrep."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from coding_harness.daemon.tools import code_search
from coding_harness.daemon.tools.code_search import GREP_MAX_MATCHES, parse_output
from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.shell.process import OutputCapture
from coding_harness.daemon.tools.workspace import Workspace
from tests.support.slow_search import RUNAWAY_PATTERN, searches, write_runaway_line, write_slow_text
from tests.support.tool_context import SECRET, build_project, process_gone, run


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return Workspace(build_project(tmp_path))


def grep(workspace: Workspace, pattern: str, path: str, **limits: float) -> str:
    return run(code_search.grep(workspace, pattern, path, **limits))


def test_grep_prints_workspace_relative_matches(workspace: Workspace) -> None:
    (workspace.root / "src" / "util.py").write_text("import os\ndef main_helper():\n    pass\n")
    result = grep(workspace, r"def \w+\(", ".")
    assert result.splitlines() == ["src/app.py:1:def main():", "src/util.py:2:def main_helper():"]
    assert grep(workspace, "return (4|5)2", "src/app.py") == "src/app.py:2:    return 42"
    assert grep(workspace, "return", "src") == "src/app.py:2:    return 42"


def test_grep_skips_binary_fifo_and_symlinked_folders(workspace: Workspace) -> None:
    root = workspace.root
    (root / "blob.bin").write_bytes(b"needle\x00\xff")
    os.mkfifo(root / "src" / "pipe")  # opening it for reading would block
    (root / "srclink").symlink_to("src", target_is_directory=True)
    (root / "src" / "needle.txt").write_text("a needle here\n")
    (root / "alias.txt").symlink_to("src/needle.txt")
    result = grep(workspace, "needle", ".")
    assert result.splitlines() == ["alias.txt:1:a needle here", "src/needle.txt:1:a needle here"]
    assert grep(workspace, "needle", "blob.bin").startswith("no matches")  # named, still binary
    with pytest.raises(ToolRefusal, match="named pipe"):
        grep(workspace, "needle", "src/pipe")


def test_grep_reports_bad_regex_and_no_match(workspace: Workspace) -> None:
    with pytest.raises(ToolRefusal, match="invalid regular expression"):
        grep(workspace, "(unclosed", ".")
    assert grep(workspace, "zzz-not-there", "src").startswith("no matches")
    with pytest.raises(ToolRefusal, match="does not exist"):
        grep(workspace, "x", "nope")


def test_grep_speaks_rust_regex(workspace: Workspace) -> None:
    """The dialect changed from Python's `re` to ripgrep's: no look-around."""
    with pytest.raises(ToolRefusal, match=r"(?s)invalid regular expression.*look-around"):
        grep(workspace, r"(?<=def )main", ".")
    assert grep(workspace, r"(?i)DEF\s+MAIN", ".") == "src/app.py:1:def main():"
    assert grep(workspace, "-> x|return", "src") == "src/app.py:2:    return 42"  # leading '-'


def test_grep_refuses_patterns_no_program_can_be_given(workspace: Workspace) -> None:
    for pattern, why in [("a\x00b", "NUL byte"), ("x" * 10_001, "longer than"), ("\ud800", "")]:
        with pytest.raises(ToolRefusal, match=f"invalid regular expression.*{why}"):
            grep(workspace, pattern, ".")


def test_grep_caps_matches_and_long_lines(workspace: Workspace) -> None:
    (workspace.root / "many.txt").write_text("hit\n" * (GREP_MAX_MATCHES + 50))
    (workspace.root / "wide.txt").write_text("hit" + "y" * 2000 + "\n")
    (workspace.root / "huge.txt").write_text("hit" + "y" * 50_000 + "\n")
    result = grep(workspace, "hit", "many.txt").splitlines()
    assert len(result) == GREP_MAX_MATCHES + 1
    assert "stopped after 500 matches" in result[-1]
    wide = grep(workspace, "hit", "wide.txt")
    assert len(wide) < 700
    assert "1503 more characters" in wide
    huge = grep(workspace, "hit", "huge.txt")
    assert len(huge) < 700
    assert "more characters not shown" in huge


def test_grep_keeps_its_caps_when_ripgrep_says_far_more(workspace: Workspace) -> None:
    flood = workspace.root / "flood"
    flood.mkdir()
    for index in range(100):  # ~1 MB of output, more than grep keeps of it
        (flood / f"f{index:03d}.txt").write_text("hit\n" * 600)
    result = grep(workspace, "hit", ".").splitlines()
    assert result[:2] == ["flood/f000.txt:1:hit", "flood/f000.txt:2:hit"]
    assert len(result) == GREP_MAX_MATCHES + 1
    assert "stopped after 500 matches" in result[-1]


def test_parse_output_reads_only_the_true_head_of_a_cut_output() -> None:
    """`run_process` keeps a head and a tail; only whole lines of the head are read."""
    capture = OutputCapture(1_000)
    for number in range(1, 2_001):
        capture.feed(f"./f.txt\x00{number}:line {number}\n".encode())
    capture.feed(b"./z.txt\x0099:the tail\n")
    matches, cut = parse_output(capture.text(), 1_000)
    assert cut
    assert [m.line for m in matches] == list(range(1, len(matches) + 1))
    assert 10 < len(matches) < 40
    assert all(m.path == "f.txt" for m in matches)


def test_grep_matches_no_phantom_last_line(workspace: Workspace) -> None:
    (workspace.root / "two.txt").write_text("a\nb\n")
    (workspace.root / "dos.txt").write_bytes(b"one\r\ntwo\r\n")
    assert grep(workspace, "^$", "two.txt").startswith("no matches")
    assert grep(workspace, "^two$", "dos.txt") == "dos.txt:2:two"


def test_grep_never_searches_or_shows_hidden_names(workspace: Workspace) -> None:
    root = workspace.root
    for hidden in ("sub/.cache", "old~", "#lock-dir#"):
        (root / hidden).mkdir()
        (root / hidden / "inside.txt").write_text(f"{SECRET}\n")
    (root / "src" / "app.py~").write_text(f"{SECRET}\n")
    (root / "src" / "#app.py#").write_text(f"{SECRET}\n")
    (root / "src" / "shown.txt").write_text(f"not {SECRET[:3]}\n")
    result = grep(workspace, "SECRET|TOP", ".")
    assert result == "src/shown.txt:1:not TOP"
    for path in (".env", "old~", "#lock-dir#/inside.txt", "src/app.py~", "sub/.cache"):
        with pytest.raises(ToolRefusal, match="hidden"):
            grep(workspace, "SECRET", path)


def test_grep_refuses_paths_outside_and_links_out(workspace: Workspace) -> None:
    for path in ("..", "../outside.txt", "/etc", "outlink", "link_passwd", "../proj-evil"):
        with pytest.raises(ToolRefusal, match="outside the workspace"):
            grep(workspace, "root|SECRET", path)
    (workspace.root / "src" / "up").symlink_to("../..", target_is_directory=True)
    (workspace.root / "src" / "etc_passwd").symlink_to("/etc/passwd")
    (workspace.root / "src" / "loop").symlink_to("loop")
    (workspace.root / "src" / "dangling").symlink_to("gone.txt")
    assert grep(workspace, "root:|SECRET", ".").startswith("no matches")


def test_without_ripgrep_grep_runs_in_python_and_says_so(
    workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as patch:
        patch.setattr(sys, "executable", str(tmp_path / "nowhere" / "python3"))
        patch.setenv("PATH", str(tmp_path / "nowhere"))
        assert code_search.find_ripgrep() is None
    monkeypatch.setattr(code_search, "find_ripgrep", lambda: None)
    lines = grep(workspace, r"(?<=def )main", ".").splitlines()  # look-behind: Python's re
    assert lines[0] == "src/app.py:1:def main():"
    assert lines[1].startswith("[ripgrep ('rg') is missing")
    assert "Python regex syntax" in lines[1]
    assert "pip install ripgrep" in lines[1]
    assert len(lines) == 2
    with pytest.raises(ToolRefusal, match=r"'rg' is neither next to .* pip install ripgrep"):
        grep(workspace, "x", ".", use_ripgrep=True)


def test_grep_obeys_ignore_files_at_every_level_outside_a_git_repository(
    workspace: Workspace,
) -> None:
    root = workspace.root
    for rel in ("build/out.txt", "src/gen/made.py", "src/kept.py", "src/skip.tmp", "a.log"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("needle\n")
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "src" / ".gitignore").write_text("/gen/\n*.tmp\n")
    (root / ".ignore").write_text("!a.log\n")
    (root / "vendor").mkdir()
    (root / "vendor" / "lib.txt").write_text("needle\n")
    (root / ".rgignore").write_text("vendor/\n")
    (root / "build" / "alias.txt").symlink_to("../src/kept.py")
    assert grep(workspace, "needle", ".").splitlines() == ["a.log:1:needle", "src/kept.py:1:needle"]
    # named as the start, an ignored file or folder is searched all the same
    assert grep(workspace, "needle", "src/skip.tmp") == "src/skip.tmp:1:needle"
    assert grep(workspace, "needle", "build").splitlines() == [
        "build/alias.txt:1:needle",
        "build/out.txt:1:needle",
    ]


def test_a_catastrophic_pattern_is_answered_at_once(workspace: Workspace) -> None:
    write_runaway_line(workspace.root)
    assert grep(workspace, "(a+)+$", "a.txt").startswith("no matches")
    assert grep(workspace, "(a+)+!$", "a.txt") == "a.txt:1:" + "a" * 34 + "!"


def test_a_search_past_its_time_limit_is_stopped_and_said_so(workspace: Workspace) -> None:
    write_runaway_line(workspace.root)
    write_slow_text(workspace.root, files=2)
    (workspace.root / "README.md").write_text("aaaaaaaaaaaaaaaaaaaaaaa!\n")  # found first
    result = grep(workspace, RUNAWAY_PATTERN, ".", time_limit=0.5)
    assert result.splitlines()[0] == "README.md:1:aaaaaaaaaaaaaaaaaaaaaaa!"
    assert "search timed out after 0.5 s" in result.splitlines()[-1]
    assert not searches(os.getpid())
    assert grep(workspace, RUNAWAY_PATTERN, "src", time_limit=0.5).startswith("no matches")


def test_cancelling_a_search_kills_ripgrep(workspace: Workspace) -> None:
    write_slow_text(workspace.root, files=2)

    async def cancel_while_searching() -> list[int]:
        task = asyncio.create_task(code_search.grep(workspace, RUNAWAY_PATTERN, "."))
        for _ in range(200):
            await asyncio.sleep(0.02)
            if running := searches(os.getpid()):
                break
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return [process.pid for process in running]

    pids = run(cancel_while_searching())
    assert pids, "ripgrep never started"
    assert all(process_gone(pid) for pid in pids)
