"""The permission modes at the tools: what ask, accept-edits and read-only let through.

The edit gate, the tool list, the guard against a write tool named anyway, run_shell's
read-only rule and uv's approval, each over a real workspace and a scripted approver
(one given no answers fails the test if it is asked).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coding_harness.daemon.agent.prompts import system_prompt
from coding_harness.daemon.agent.seams import ToolCall
from coding_harness.daemon.tools.builtin import build_tools
from coding_harness.daemon.tools.context import ToolContext
from coding_harness.protocol.modes import ACCEPT_EDITS, ASK, READ_ONLY
from tests.support.edits import APP, CHECKING_MAKEFILE, edit
from tests.support.tool_context import ScriptedApprover, build_project, make_ctx, run

NEW = "def main():\n    return 43\n"
WRITE_TOOLS = ("propose_edit", "replace_text", "write_file")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = build_project(tmp_path)
    (project / "Makefile").write_text(CHECKING_MAKEFILE)
    return project


def names(ctx: ToolContext) -> list[str]:
    return [schema["function"]["name"] for schema in build_tools(ctx).schemas()]


def call(ctx: ToolContext, name: str, **arguments: str) -> str:
    tool_call = ToolCall(id="1", name=name, arguments=json.dumps(arguments))
    return run(build_tools(ctx).execute(tool_call))


def test_ask_puts_the_edit_to_the_people(root: Path) -> None:
    approver = ScriptedApprover(("no", ""))
    result, _, _ = edit(root, "src/app.py", APP, NEW, approver, mode=ASK)
    assert "rejected" in result
    assert len(approver.requests) == 1
    assert (root / "src" / "app.py").read_text() == APP


def test_accept_edits_applies_without_asking_and_still_shows_the_diff(root: Path) -> None:
    result, ctx, sink = edit(root, "src/app.py", APP, NEW, mode=ACCEPT_EDITS)
    assert result.startswith("applied (auto-approved): wrote 'src/app.py'")
    assert (root / "src" / "app.py").read_text() == NEW
    assert [data["path"] for data in sink.of_kind("diff")] == ["src/app.py"]
    assert ctx.outcome.files_changed == ["src/app.py"]


def test_accept_edits_still_asks_for_a_change_to_what_make_check_runs(root: Path) -> None:
    approver = ScriptedApprover(("no", ""))
    makefile = (root / "Makefile").read_text()
    edit(root, "Makefile", makefile, makefile + "\n# more\n", approver, mode=ACCEPT_EDITS)
    assert len(approver.requests) == 1
    assert approver.requests[0].summary.endswith("so it is asked even with the accept-edits mode")


def test_read_only_refuses_a_write_and_shows_no_diff(root: Path) -> None:
    result, ctx, sink = edit(root, "src/app.py", APP, NEW, mode=READ_ONLY)
    assert result.startswith("refused: this session is in read-only mode")
    assert (root / "src" / "app.py").read_text() == APP
    assert sink.events == []
    assert ctx.outcome.exit_code() == 0


def test_read_only_offers_no_write_tool(root: Path) -> None:
    ctx, _ = make_ctx(root, mode=READ_ONLY)
    offered = names(ctx)
    assert not set(WRITE_TOOLS) & set(offered)
    assert {"read_file", "list_dir", "grep", "run_shell"} <= set(offered)
    ask, _ = make_ctx(root)
    assert set(WRITE_TOOLS) <= set(names(ask))


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("write_file", {"path": "new.txt", "content": "x\n"}),
        ("propose_edit", {"path": "src/app.py", "old": APP, "new": NEW}),
        ("replace_text", {"path": "src/app.py", "old_text": "42", "new_text": "43"}),
    ],
)
def test_read_only_refuses_a_write_tool_the_model_names_anyway(
    root: Path, name: str, arguments: dict[str, str]
) -> None:
    ctx, sink = make_ctx(root, mode=READ_ONLY)
    result = call(ctx, name, **arguments)
    assert result.startswith(f"refused: {name} is not available because this session is in")
    assert "describe the change as a step of your plan" in result
    assert (root / "src" / "app.py").read_text() == APP
    assert not (root / "new.txt").exists()
    assert sink.events == []


def test_read_only_runs_commands_that_change_nothing(root: Path) -> None:
    ctx, _ = make_ctx(root, mode=READ_ONLY)
    assert "app.py" in call(ctx, "run_shell", command="ls src")
    assert "return 42" in call(ctx, "run_shell", command="cat src/app.py")


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("make check", "its recipes may write files"),
        ("make -n", "its recipes may write files"),
        ("uv run pytest", "it may change the workspace"),
        ("uv sync", "it may change the workspace"),
    ],
)
def test_read_only_refuses_commands_that_may_change_something(
    root: Path, uv_log: Path, command: str, why: str
) -> None:
    (root / "Makefile").write_text("check:\n\ttouch check-ran\n")
    ctx, _ = make_ctx(root, mode=READ_ONLY)
    result = call(ctx, "run_shell", command=command)
    assert result.startswith("refused: this session is in read-only mode")
    assert why in result
    assert not uv_log.exists()
    assert not (root / "check-ran").exists()


def test_read_only_refuses_a_program_allowed_for_the_session(root: Path) -> None:
    ctx, _ = make_ctx(root, mode=READ_ONLY, extra_commands=frozenset({"touch"}))
    result = call(ctx, "run_shell", command="touch made.txt")
    assert "a program allowed with /allow-cmd may change the workspace" in result
    assert not (root / "made.txt").exists()


def test_read_only_runs_uv_read_only_subcommands(root: Path, uv_log: Path) -> None:
    ctx, _ = make_ctx(root, mode=READ_ONLY)
    assert call(ctx, "run_shell", command="uv pip list") == "fake uv ran\n(exit 0)"
    assert uv_log.read_text().splitlines() == ["pip list"]


def test_accept_edits_keeps_asking_before_uv_run(root: Path, uv_log: Path) -> None:
    """Commands keep their rules: only -y approves `uv run` without asking."""
    approver = ScriptedApprover(("no", ""))
    ctx, _ = make_ctx(root, approver, mode=ACCEPT_EDITS)
    result = call(ctx, "run_shell", command="uv run pytest")
    assert "declined to run `uv run pytest`" in result
    assert len(approver.requests) == 1
    assert not uv_log.exists()


def test_the_system_prompt_says_the_mode(tmp_path: Path) -> None:
    ask = system_prompt(tmp_path)
    assert "Permission mode" not in ask
    assert system_prompt(tmp_path, mode=ASK) == ask
    read_only = system_prompt(tmp_path, mode=READ_ONLY)
    assert "Permission mode: read-only (plan mode)" in read_only
    assert "numbered plan" in read_only
    assert "Permission mode: accept-edits" in system_prompt(tmp_path, mode=ACCEPT_EDITS)
