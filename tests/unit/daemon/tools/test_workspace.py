"""Workspace path resolution: component-wise containment on real paths, hidden names."""

from __future__ import annotations

from pathlib import Path, PurePath

import pytest

from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.workspace import Workspace, check_not_hidden, is_hidden_name
from tests.support.tool_context import build_project


@pytest.mark.parametrize(
    ("name", "hidden"),
    [
        (".env", True),
        (".git", True),
        ("notes~", True),
        ("#lock#", True),
        ("#", False),
        ("a#b#", False),
        ("#notes", False),
        ("README.md", False),
        (".", False),
        ("..", False),
    ],
)
def test_is_hidden_name(name: str, hidden: bool) -> None:
    assert is_hidden_name(name) is hidden


def test_check_not_hidden_looks_at_every_component() -> None:
    check_not_hidden(PurePath("src/app.py"))
    with pytest.raises(ToolRefusal, match=r"'\.git'"):
        check_not_hidden(PurePath("sub/.git/config"))


def test_root_is_stored_as_its_real_path(tmp_path: Path) -> None:
    root = build_project(tmp_path)
    alias = tmp_path / "alias"
    alias.symlink_to(root)
    workspace = Workspace(alias)
    assert workspace.root == root.resolve()
    # the path typed through the alias still counts as inside
    assert workspace.resolve(str(alias / "README.md")) == root.resolve() / "README.md"
    assert workspace.resolve_visible(str(alias / "src")) == root.resolve() / "src"


def test_relative_and_absolute_paths_inside(tmp_path: Path) -> None:
    root = build_project(tmp_path)
    workspace = Workspace(root)
    assert workspace.resolve("src/app.py") == root / "src" / "app.py"
    assert workspace.resolve("./src/../README.md") == root / "README.md"
    assert workspace.resolve(str(root / "README.md")) == root / "README.md"
    assert workspace.resolve("") == root
    assert workspace.relative(root) == "."
    assert workspace.relative(root / "src" / "app.py") == "src/app.py"


@pytest.mark.parametrize("path", ["../proj-evil/x", "../proj", "..", "/"])
def test_sibling_prefix_and_parents_are_outside(tmp_path: Path, path: str) -> None:
    root = build_project(tmp_path)
    if path == "../proj":  # the root itself, reached the long way, is inside
        assert Workspace(root).resolve(path) == root
        return
    with pytest.raises(ToolRefusal, match="outside the workspace"):
        Workspace(root).resolve(path)


def test_absolute_sibling_with_shared_prefix_is_outside(tmp_path: Path) -> None:
    root = build_project(tmp_path)
    with pytest.raises(ToolRefusal, match="outside the workspace"):
        Workspace(root).resolve(f"{root}X/file")


def test_symlink_out_says_it_resolves_outside(tmp_path: Path) -> None:
    root = build_project(tmp_path)
    with pytest.raises(ToolRefusal, match="through a symlink"):
        Workspace(root).resolve("outlink/secret.txt")


def test_resolve_visible_checks_typed_and_resolved_forms(tmp_path: Path) -> None:
    root = build_project(tmp_path)
    workspace = Workspace(root)
    assert workspace.resolve("notes.txt") == root / ".env"  # plain resolve allows it
    for path in ("notes.txt", "x/../.env", ".git/../README.md"):
        with pytest.raises(ToolRefusal, match="hidden"):
            workspace.resolve_visible(path)
    assert workspace.resolve_visible("sub/../README.md") == root / "README.md"


def test_resolve_for_write_allows_new_nested_files(tmp_path: Path) -> None:
    root = build_project(tmp_path)
    workspace = Workspace(root)
    assert workspace.resolve_for_write("new/deeper/file.py") == root / "new" / "deeper" / "file.py"
    with pytest.raises(ToolRefusal, match="is a file, not a folder"):
        workspace.resolve_for_write("README.md/inner.txt")
    with pytest.raises(ToolRefusal, match="hidden"):
        workspace.resolve_for_write("new/.secret")
    with pytest.raises(ToolRefusal, match="outside"):
        workspace.resolve_for_write("outlink/new.txt")
    with pytest.raises(ToolRefusal, match="root"):
        workspace.resolve_for_write(".")


def test_dangling_symlink_out_is_refused_for_write(tmp_path: Path) -> None:
    root = build_project(tmp_path)
    (root / "trap.txt").symlink_to(tmp_path / "created-by-edit.txt")
    with pytest.raises(ToolRefusal, match="outside"):
        Workspace(root).resolve_for_write("trap.txt")
