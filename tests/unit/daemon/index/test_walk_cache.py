"""A walk with a cache of listings finds exactly what a fresh walk finds, whatever
changed in between: files and folders added, removed or renamed, ignore rules edited."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from coding_harness.daemon.index.walk import WalkCache, walk_workspace


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch) -> WalkCache:
    monkeypatch.setattr(WalkCache, "SETTLE_NS", -(10**18))  # keep even fresh listings
    return WalkCache()


def same(root: Path, cache: WalkCache) -> list[str]:
    cached = walk_workspace(root, cache=cache)
    assert cached == walk_workspace(root)
    return [f.path for f in cached.files]


def test_changes_between_walks_are_seen(tmp_path: Path, cache: WalkCache) -> None:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "a.py").write_text("a")
    (tmp_path / "pkg" / "sub" / "b.py").write_text("b")
    assert same(tmp_path, cache) == ["pkg/a.py", "pkg/sub/b.py"]
    (tmp_path / "pkg" / "sub" / "c.py").write_text("c")
    (tmp_path / "pkg" / "a.py").unlink()
    assert same(tmp_path, cache) == ["pkg/sub/b.py", "pkg/sub/c.py"]
    (tmp_path / "pkg" / "sub").rename(tmp_path / "pkg" / "moved")
    assert same(tmp_path, cache) == ["pkg/moved/b.py", "pkg/moved/c.py"]
    (tmp_path / "pkg" / "moved" / "b.py").write_text("bigger now")
    sizes = {f.path: f.size for f in walk_workspace(tmp_path, cache=cache).files}
    assert sizes["pkg/moved/b.py"] == len("bigger now")


def test_an_edited_ignore_file_is_obeyed_at_once(tmp_path: Path, cache: WalkCache) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "keep.py").write_text("k")
    (tmp_path / "pkg" / "gen.py").write_text("g")
    assert same(tmp_path, cache) == ["pkg/gen.py", "pkg/keep.py"]
    (tmp_path / ".gitignore").write_text("gen.py\n")  # the root folder changes, pkg/ does not
    assert same(tmp_path, cache) == ["pkg/keep.py"]
    stamp = tmp_path.stat().st_mtime_ns
    (tmp_path / ".gitignore").write_text("keep.py\n")  # same folder mtime, other rules
    os.utime(tmp_path, ns=(stamp, stamp))
    assert same(tmp_path, cache) == ["pkg/gen.py"]


def test_a_file_replaced_by_a_symlink_is_dropped(tmp_path: Path, cache: WalkCache) -> None:
    (tmp_path / "a.py").write_text("a")
    assert same(tmp_path, cache) == ["a.py"]
    stamp = tmp_path.stat().st_mtime_ns
    (tmp_path / "a.py").unlink()
    (tmp_path / "a.py").symlink_to("/etc/hostname")
    os.utime(tmp_path, ns=(stamp, stamp))  # even if the folder looks unchanged
    assert walk_workspace(tmp_path, cache=cache).files == []


def test_a_workspace_inside_a_repository_obeys_the_ignore_files_above_it(
    tmp_path: Path,
) -> None:
    (tmp_path / ".git" / "info").mkdir(parents=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("web/secret_notes.py\n")
    (tmp_path / ".gitignore").write_text("node_modules/\n/web/build/\n")
    web = tmp_path / "web"
    for rel in ("app.py", "node_modules/lib/a.js", "build/out.js", "secret_notes.py"):
        (web / rel).parent.mkdir(parents=True, exist_ok=True)
        (web / rel).write_text("x")
    assert [f.path for f in walk_workspace(web).files] == ["app.py"]
    assert same(web, WalkCache()) == ["app.py"]
    # Outside a repository the folders above are not looked at.
    (tmp_path / ".git" / "info" / "exclude").unlink()
    (tmp_path / ".git" / "info").rmdir()
    (tmp_path / ".git").rmdir()
    assert len(walk_workspace(web).files) == 4
