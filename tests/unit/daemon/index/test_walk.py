"""walk_workspace (`daemon/index/walk.py`) on real temporary trees."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from coding_harness.daemon.index.ignore_rules import IgnoreCheck
from coding_harness.daemon.index.walk import SourceFile, walk_workspace


def make(root: Path, *paths: str, text: str = "x\n") -> None:
    for rel in paths:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def walked(root: Path, **options: object) -> list[str]:
    return [file.path for file in walk_workspace(root, **options).files]  # type: ignore[arg-type]


def test_a_nested_gitignore_applies_only_below_its_own_folder(tmp_path: Path) -> None:
    make(tmp_path, "a.log", "keep.py", "sub/a.log", "sub/b.tmp", "other/b.tmp", "sub/deep/c.tmp")
    (tmp_path / "sub" / ".gitignore").write_text("*.tmp\n")
    assert walked(tmp_path) == ["a.log", "keep.py", "other/b.tmp", "sub/a.log"]


def test_negation_anchors_and_folder_only_rules_behave_as_in_git(tmp_path: Path) -> None:
    make(
        tmp_path,
        "x", "sub/x", "x.py", "build/out.o", "lib/build", "app.log", "important.log",
        "sub/y/z.log", "sub/y/keep.log", "sub/x2/build/o",
    )  # fmt: skip
    (tmp_path / ".gitignore").write_text("/x\nbuild/\n*.log\n!important.log\n")
    (tmp_path / "sub" / ".gitignore").write_text("!*.log\ny/z.log\n")
    assert walked(tmp_path) == [
        "important.log",
        "lib/build",  # a file: `build/` names folders only
        "sub/x",  # `/x` is anchored to the root's folder
        "sub/y/keep.log",  # the deeper file re-includes *.log
        "x.py",
    ]


def test_an_ignored_folder_is_not_entered_so_nothing_in_it_comes_back(tmp_path: Path) -> None:
    make(tmp_path, "dist/keep.txt", "dist/other.txt", "src/main.c")
    (tmp_path / ".gitignore").write_text("dist/\n!dist/keep.txt\n")
    (tmp_path / "dist" / ".gitignore").write_text("!*\n")
    assert walked(tmp_path) == ["src/main.c"]


def test_git_info_exclude_ranks_below_every_gitignore(tmp_path: Path) -> None:
    make(tmp_path, "a.gen", "b.gen", "sub/c.gen")
    (tmp_path / ".git" / "info").mkdir(parents=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("*.gen\n")
    (tmp_path / "sub" / ".gitignore").write_text("!c.gen\n")
    assert walked(tmp_path) == ["sub/c.gen"]


def test_ripgrep_ignore_files_rank_above_gitignore_when_asked_for(tmp_path: Path) -> None:
    make(tmp_path, "a.txt", "b.txt", "sub/c.txt")
    (tmp_path / ".ignore").write_text("!b.txt\n")
    (tmp_path / ".rgignore").write_text("a.txt\n")
    (tmp_path / "sub" / ".gitignore").write_text("*.txt\n")  # deeper, yet a weaker kind
    (tmp_path / ".gitignore").write_text("b.txt\n")
    names = (".rgignore", ".ignore", ".gitignore")
    assert walked(tmp_path, ignore_names=names) == ["b.txt"]
    assert walked(tmp_path) == ["a.txt"]  # the index reads .gitignore alone


def test_hidden_names_symlinks_and_other_kinds_are_left_out(tmp_path: Path) -> None:
    make(tmp_path, ".env", "src/.cache/x.py", "src/a.py", "src/a.py~", "src/#a.py#", "old~/b.py")
    (tmp_path / "src" / "link.py").symlink_to("a.py")
    (tmp_path / "linked").symlink_to("src", target_is_directory=True)
    (tmp_path / "loop").symlink_to("loop")
    os.mkfifo(tmp_path / "pipe")
    walk = walk_workspace(tmp_path)
    assert walk.files == [
        SourceFile(
            path="src/a.py",
            size=2,
            mtime_ns=(tmp_path / "src" / "a.py").stat().st_mtime_ns,
        )
    ]
    assert not walk.capped


def test_an_ignore_file_that_is_a_symlink_or_a_pipe_is_not_read(tmp_path: Path) -> None:
    make(tmp_path, "a.txt", "rules", "sub/b.txt")
    (tmp_path / "rules").write_text("*.txt\n")
    (tmp_path / ".gitignore").symlink_to("rules")
    os.mkfifo(tmp_path / "sub" / ".gitignore")  # opening it to read would block
    assert walked(tmp_path) == ["a.txt", "rules", "sub/b.txt"]


def test_a_rule_that_could_backtrack_for_seconds_is_not_used(tmp_path: Path) -> None:
    make(tmp_path, "a" * 200, "b.o")
    (tmp_path / ".gitignore").write_text("*a*a*a*a*a*a*b\n*.o\n")
    started = time.monotonic()
    assert walked(tmp_path) == ["a" * 200]
    assert time.monotonic() - started < 5  # Python's re takes minutes on that name


def test_an_unreadable_folder_is_skipped(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads any folder")
    make(tmp_path, "closed/a.txt", "open/b.txt")
    (tmp_path / "closed").chmod(0)
    try:
        assert walked(tmp_path) == ["open/b.txt"]
    finally:
        (tmp_path / "closed").chmod(0o755)


def test_the_walk_stops_at_max_files(tmp_path: Path) -> None:
    make(tmp_path, *(f"d{folder}/f{index}.txt" for folder in range(3) for index in range(4)))
    walk = walk_workspace(tmp_path, max_files=5)
    assert walk.capped
    assert [file.path for file in walk.files] == [
        "d0/f0.txt", "d0/f1.txt", "d0/f2.txt", "d0/f3.txt", "d1/f0.txt",
    ]  # fmt: skip
    assert not walk_workspace(tmp_path, max_files=12).capped


def test_ignore_check_answers_for_scattered_paths(tmp_path: Path) -> None:
    make(tmp_path, "vendor/x/a.js", "src/b.js", "src/gen/c.js", "src/d.js")
    (tmp_path / ".gitignore").write_text("vendor/\n")
    (tmp_path / "src" / ".gitignore").write_text("gen/\nd.js\n")
    check = IgnoreCheck(tmp_path)
    assert check.ignored("vendor/x/a.js")
    assert check.ignored("src/gen/c.js")
    assert check.ignored("src/d.js")
    assert not check.ignored("src/b.js")
    assert check.ignored(".hidden/e.js")
