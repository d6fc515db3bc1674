"""make targets other than the check ask in the ask mode (issue 27.3), and allow-list
entries narrowed to a subcommand (issue 26.15): run_shell with real processes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.shell.allow_list import Allowances, BadEntry, checked_entry
from coding_harness.daemon.tools.shell.run_shell import run_shell
from coding_harness.protocol.modes import ACCEPT_EDITS, READ_ONLY
from tests.support.tool_context import ScriptedApprover, build_project, make_ctx, run

MAKEFILE = "check:\n\t@echo checked\nclean:\n\trm -f src/app.py\nlint:\n\t@echo linted\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = build_project(tmp_path)
    (project / "Makefile").write_text(MAKEFILE)
    return project


def shell(root: Path, command: str, approver: ScriptedApprover | None = None, **flags: Any) -> str:
    ctx, _ = make_ctx(root, approver, **flags)
    try:
        return run(run_shell(ctx, command))
    except ToolRefusal as refusal:
        return str(refusal)


def test_make_clean_asks_in_the_ask_mode_and_a_no_keeps_the_files(root: Path) -> None:
    approver = ScriptedApprover(("no", ""))
    result = shell(root, "make clean", approver)
    assert result == "the user declined to run `make clean`; it did not run."
    assert (root / "src" / "app.py").exists()
    [asked] = approver.requests
    assert asked.kind == "command" and asked.allow == "make clean"
    assert "may change or delete files" in asked.summary


def test_make_clean_runs_after_a_yes(root: Path) -> None:
    result = shell(root, "make clean", ScriptedApprover(("yes", "")))
    assert result.endswith("(exit 0)") and not (root / "src" / "app.py").exists()


def test_the_check_and_make_version_run_unasked(root: Path) -> None:
    assert shell(root, "make check") == "checked\n(exit 0)"
    assert shell(root, "make --version").endswith("(exit 0)")


def test_a_bare_make_or_several_targets_ask_without_always(root: Path) -> None:
    approver = ScriptedApprover(("no", ""), ("no", ""))
    shell(root, "make", approver)
    shell(root, "make check lint", approver)
    assert [r.allow for r in approver.requests] == ["", ""]


def test_accept_edits_and_yes_run_it_read_only_never(root: Path) -> None:
    assert shell(root, "make lint", mode=ACCEPT_EDITS) == "linted\n(exit 0)"
    assert shell(root, "make lint", auto_approve=True) == "linted\n(exit 0)"
    assert "read-only mode" in shell(root, "make lint", mode=READ_ONLY)


def test_an_allow_list_entry_lets_the_target_run_unasked(root: Path) -> None:
    assert shell(root, "make lint", extra_commands=frozenset({"make lint"})) == "linted\n(exit 0)"
    assert shell(root, "make lint", extra_commands=frozenset({"make"})) == "linted\n(exit 0)"
    approver = ScriptedApprover(("no", ""))
    shell(root, "make clean", approver, extra_commands=frozenset({"make lint"}))
    assert len(approver.requests) == 1


def test_a_program_narrowed_to_subcommands_runs_only_those(root: Path) -> None:
    extras = frozenset({"echo hello", "echo bye"})
    assert shell(root, "echo hello there", extra_commands=extras) == "hello there\n(exit 0)"
    refused = shell(root, "echo push origin", extra_commands=extras)
    assert refused.startswith("refused: of echo, only echo bye, echo hello may run")
    assert "/allow-cmd echo push" in refused
    assert shell(root, "echo", extra_commands=extras).startswith("refused: of echo")


def test_allowances_see_an_entry_added_mid_turn() -> None:
    session: set[str] = set()
    allowed = Allowances(session, ("git log",))
    assert "git log" in allowed and "uv run" not in allowed
    session.add("uv run")
    assert "uv run" in allowed and sorted(allowed) == ["git log", "uv run"]


@pytest.mark.parametrize(
    ("text", "entry"),
    [
        ("git  log", "git log"),
        ("cargo", "cargo"),
        ("uv run", "uv run"),
        ("make clean", "make clean"),
    ],
)
def test_entries_are_checked_and_joined(text: str, entry: str) -> None:
    assert checked_entry(text) == entry


@pytest.mark.parametrize(
    "text", ["/bin/sh", "git log -p", "uv pip", "ls src", ".x", "git --all", ""]
)
def test_bad_entries_are_refused(text: str) -> None:
    with pytest.raises(BadEntry):
        checked_entry(text)
