"""unified_diff: git-style labels and the missing-final-newline marker."""

from __future__ import annotations

from coding_harness.daemon.tools.edit.diff import unified_diff


def test_changed_line() -> None:
    diff = unified_diff("a\nb\nc\n", "a\nB\nc\n", "src/x.py")
    assert diff == ("--- a/src/x.py\n+++ b/src/x.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n")


def test_no_change_is_empty() -> None:
    assert unified_diff("same\n", "same\n", "x") == ""


def test_new_file_from_nothing() -> None:
    diff = unified_diff("", "one\ntwo\n", "new.txt")
    assert diff.splitlines()[2] == "@@ -0,0 +1,2 @@"
    assert diff.endswith("+one\n+two\n")


def test_missing_final_newline_is_marked() -> None:
    diff = unified_diff("a\nb", "a\nb\n", "f")
    assert diff.endswith("-b\n\\ No newline at end of file\n+b\n")
    diff = unified_diff("a\n", "a\nz", "f")
    assert diff.endswith("+z\n\\ No newline at end of file\n")


def test_only_newlines_split_lines() -> None:
    diff = unified_diff("a\x0cb\n", "a\x0cc\n", "f")
    assert "No newline" not in diff
    assert "-a\x0cb\n+a\x0cc\n" in diff
