"""Every route to the file system refuses every escape attempt, and leaks nothing."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from coding_harness.daemon.agent.seams import ToolCall
from coding_harness.daemon.tools.builtin import build_tools
from tests.support.tool_context import ESCAPES, SECRET, build_project, make_ctx, run


def _call(root: Path, name: str, **arguments: str) -> str:
    ctx, _ = make_ctx(root)
    call = ToolCall(id="c1", name=name, arguments=json.dumps(arguments))
    return run(build_tools(ctx).execute(call))


ROUTES = {
    "read_file": lambda root, path: _call(root, "read_file", path=path),
    "list_dir": lambda root, path: _call(root, "list_dir", path=path),
    "grep": lambda root, path: _call(root, "grep", pattern="SECRET|root:|token", path=path),
    "cat": lambda root, path: _call(root, "run_shell", command=f"cat {shlex.quote(path)}"),
}


@pytest.mark.parametrize("route", sorted(ROUTES))
@pytest.mark.parametrize(("path", "fragment"), ESCAPES, ids=[p[:30] for p, _ in ESCAPES])
def test_escape_is_refused_and_nothing_is_read(
    tmp_path: Path, route: str, path: str, fragment: str
) -> None:
    root = build_project(tmp_path)
    result = ROUTES[route](root, path)
    assert fragment in result
    assert SECRET not in result
    assert "root:" not in result
    assert "(exit" not in result  # no program ran


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_refusal_names_the_workspace_relative_form(tmp_path: Path, route: str) -> None:
    root = build_project(tmp_path)
    result = ROUTES[route](root, "../outside.txt")
    assert "relative to the workspace root" in result


def test_grep_walk_skips_hidden_and_outside_targets(tmp_path: Path) -> None:
    root = build_project(tmp_path)
    result = _call(root, "grep", pattern="SECRET|token|root:", path=".")
    assert result.startswith("no matches")


def test_list_dir_root_leaves_hidden_entries_out(tmp_path: Path) -> None:
    root = build_project(tmp_path)
    listing = _call(root, "list_dir", path=".").splitlines()
    assert listing == ["README.md", "link_passwd", "notes.txt", "outlink/", "src/", "sub/"]
