"""replace_text: one exact snippet, through the same gate as propose_edit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from coding_harness.daemon.agent.seams import ApprovalRequest, ToolCall
from coding_harness.daemon.tools.builtin import build_tools
from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.edit.replace import replace_text
from coding_harness.daemon.tools.errors import ToolRefusal
from tests.support.tool_context import RecordingSink, ScriptedApprover, build_project, make_ctx, run

SOURCE = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a + b\n"
PASSING_MAKEFILE = "check:\n\t@echo checked\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = build_project(tmp_path)
    (project / "src" / "calc.py").write_text(SOURCE)
    (project / "Makefile").write_text(PASSING_MAKEFILE)
    return project


def replace(
    root: Path,
    path: str,
    old_text: str,
    new_text: str,
    approver: ScriptedApprover | None = None,
    **flags: Any,
) -> tuple[str, ToolContext, RecordingSink]:
    ctx, sink = make_ctx(root, approver, **flags)
    try:
        result = run(replace_text(ctx, path, old_text, new_text))
    except ToolRefusal as refusal:  # the registry turns these into results
        result = str(refusal)
    return result, ctx, sink


def test_a_unique_snippet_is_replaced_after_approval(root: Path) -> None:
    approver = ScriptedApprover(("yes", ""))
    old = "def sub(a, b):\n    return a + b"
    result, ctx, sink = replace(
        root, "src/calc.py", old, "def sub(a, b):\n    return a - b", approver
    )
    assert result == "applied: wrote 'src/calc.py'. make check passed."
    assert (root / "src" / "calc.py").read_text() == SOURCE[:-6] + "a - b\n"
    [request] = approver.requests
    assert request.kind == "edit"
    assert request.summary == "edit src/calc.py (+1 -1 lines)"
    assert "-    return a + b\n+    return a - b\n" in request.diff
    [diff] = sink.of_kind("diff")
    assert diff["diff"] == request.diff
    assert ctx.outcome.files_changed == ["src/calc.py"]


def test_no_match_says_so_and_points_to_read_file(root: Path) -> None:
    result, _, sink = replace(root, "src/calc.py", "return a * b", "return 0")
    assert result == (
        "old_text was not found in 'src/calc.py'; nothing was changed. It must match the file "
        "exactly, including indentation and line breaks. Call read_file on 'src/calc.py' "
        "and copy the snippet from what it returns."
    )
    assert sink.events == []


def test_a_whitespace_near_miss_gets_a_hint(root: Path) -> None:
    result, _, _ = replace(root, "src/calc.py", "def add(a, b):\n  return a + b", "x")
    assert result.startswith("old_text was not found in 'src/calc.py'")
    assert "does appear with different leading or trailing whitespace" not in result
    result, _, _ = replace(root, "src/calc.py", "\tdef add(a, b):  ", "x")
    assert "does appear with different leading or trailing whitespace" in result


def test_several_matches_ask_for_more_context(root: Path) -> None:
    result, _, _ = replace(root, "src/calc.py", "    return a + b", "    return 0")
    assert result == (
        "old_text occurs 2 times in 'src/calc.py', so it is not clear which one to replace. "
        "Include more of the surrounding lines in old_text (and the same lines in new_text) "
        "so that it matches exactly once."
    )
    assert (root / "src" / "calc.py").read_text() == SOURCE


def test_missing_file_empty_snippet_and_no_op_are_refused(root: Path) -> None:
    assert "propose_edit" in replace(root, "src/none.py", "a", "b")[0]
    assert replace(root, "src/calc.py", "", "x")[0].startswith("refused: old_text is empty")
    assert replace(root, "src/calc.py", "add", "add")[0].startswith("no changes")


def test_hidden_and_outside_paths_are_refused_before_any_diff(root: Path) -> None:
    cases = [(".env", "hidden"), ("../outside.txt", "outside"), ("outlink/secret.txt", "outside")]
    for path, fragment in cases:
        result, _, sink = replace(root, path, "x", "y", auto_approve=True)
        assert fragment in result
        assert sink.events == []


def test_dry_run_shows_the_diff_only(root: Path) -> None:
    result, ctx, sink = replace(root, "src/calc.py", "def add", "def plus", dry_run=True)
    assert result.startswith("dry run: the diff for 'src/calc.py' was shown")
    assert (root / "src" / "calc.py").read_text() == SOURCE
    assert "+def plus(a, b):" in sink.of_kind("diff")[0]["diff"]
    assert ctx.outcome.dry_run_diffs == 1


def test_rejection_and_skip_write_nothing(root: Path) -> None:
    result, ctx, _ = replace(
        root, "src/calc.py", "def add", "def plus", ScriptedApprover(("no", ""))
    )
    assert result == "the user rejected this change to 'src/calc.py'; the file was not written."
    assert ctx.outcome.exit_code() == 3
    approver = ScriptedApprover(("skip", "keep the name"))
    result, _, _ = replace(root, "src/calc.py", "def add", "def plus", approver)
    assert result.endswith("Reason: keep the name")
    assert (root / "src" / "calc.py").read_text() == SOURCE


def test_a_file_changed_during_approval_is_not_overwritten(root: Path) -> None:
    target = root / "src" / "calc.py"

    def someone_edits(_: ApprovalRequest) -> None:
        target.write_text(SOURCE + "# mine\n")

    approver = ScriptedApprover(("yes", ""), before_answer=someone_edits)
    result, _, _ = replace(root, "src/calc.py", "def add", "def plus", approver)
    assert "changed since the diff was shown" in result
    assert target.read_text() == SOURCE + "# mine\n"


def test_crlf_files_accept_plain_newlines_and_stay_crlf(root: Path) -> None:
    target = root / "win.txt"
    target.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result, _, _ = replace(root, "win.txt", "one\ntwo\n", "one\n2\n", auto_approve=True)
    assert result.startswith("applied (auto-approved): wrote 'win.txt'")
    assert target.read_bytes() == b"one\r\n2\r\nthree\r\n"


def test_the_registered_tool_takes_the_contract_parameters(root: Path) -> None:
    ctx, _ = make_ctx(root, auto_approve=True)
    arguments = '{"path": "src/calc.py", "old_text": "def add", "new_text": "def plus"}'
    result = run(
        build_tools(ctx).execute(ToolCall(id="1", name="replace_text", arguments=arguments))
    )
    assert result.startswith("applied (auto-approved): wrote 'src/calc.py'")
    assert "def plus(a, b):" in (root / "src" / "calc.py").read_text()
