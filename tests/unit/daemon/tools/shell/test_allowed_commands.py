"""run_shell with programs the user allowed for the session (`/allow-cmd NAME`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.shell.run_shell import allowed_extras, run_shell
from tests.support.tool_context import build_project, make_ctx, run


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return build_project(tmp_path)


def shell(root: Path, command: str, **flags: Any) -> str:
    ctx, _ = make_ctx(root, **flags)
    try:
        return run(run_shell(ctx, command))
    except ToolRefusal as refusal:
        return str(refusal)


def test_an_allowed_program_runs(root: Path) -> None:
    result = shell(root, "echo hello there", extra_commands=frozenset({"echo"}))
    assert result == "hello there\n(exit 0)"


def test_it_is_refused_without_the_allowance(root: Path) -> None:
    assert shell(root, "echo hi") == (
        "refused: 'echo' is not allowed. run_shell runs only cat, ls, make, pwd, uv, "
        "named without a path"
    )


def test_the_refusal_lists_the_sessions_extras(root: Path) -> None:
    result = shell(root, "rm -rf src", extra_commands=frozenset({"echo", "wc"}))
    assert "run_shell runs only cat, echo, ls, make, pwd, uv, wc, named without a path" in result


def test_still_no_shell_and_no_paths(root: Path) -> None:
    extras = {"extra_commands": frozenset({"echo", "head"})}
    assert "looks like shell syntax" in shell(root, "echo hi; id", **extras)
    assert "not allowed" in shell(root, "/bin/echo hi", **extras)
    assert "hidden" in shell(root, "head .env", **extras)
    assert "outside the workspace" in shell(root, "head ../outside.txt", **extras)
    assert "outside the workspace" in shell(root, "head --file=/etc/passwd", **extras)
    assert "hidden" in shell(root, "head sub/.git/config", **extras)


def test_names_that_are_not_bare_commands_are_ignored(root: Path) -> None:
    given = frozenset({"echo", "/bin/sh", "../x", ".hidden", "", "ok-name_1.2", "mcp__s__t"})
    assert allowed_extras(given) == frozenset({"echo", "ok-name_1.2"})
    assert "not allowed" in shell(root, "/bin/sh -c id", extra_commands=given)


def test_extras_do_not_run_in_a_dry_run(root: Path) -> None:
    result = shell(root, "echo hi", extra_commands=frozenset({"echo"}), dry_run=True)
    assert result.startswith("refused: 'echo' was allowed for this session, but this is a dry run")
    assert shell(root, "ls src", dry_run=True) == "app.py\n(exit 0)"


def test_builtin_rules_still_apply_to_builtin_names(root: Path) -> None:
    (root / "Makefile").write_text("all:\n\t@echo ok\n")
    result = shell(root, "make -f ../evil.mk", extra_commands=frozenset({"make"}))
    assert "make option '-f' is not allowed" in result
