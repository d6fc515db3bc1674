"""Hostile files against the real index: files of unclosed brackets (seconds of
tree-sitter's query each, holding the interpreter) never run in the daemon's
process, a child stuck on one file costs that file only, a symlink is not read.

The bounds on how long this process's interpreter is held are correctness bounds
(before, one such file held it ~3 s), not speed figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from coding_harness.daemon.index import parse_pool, parse_worker
from coding_harness.daemon.index.code_index import CodeIndex
from coding_harness.daemon.index.symbols import describe
from tests.unit.daemon.index.stall_watch import StallWatch

BOMB = b"(" * 64_000  # tree-sitter's query takes ~3 s on it, in any of our grammars


def test_bracket_bombs_never_hold_the_daemons_interpreter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parse_pool, "FILE_SECONDS", 0.5, raising=False)
    monkeypatch.setattr(parse_pool, "WORKERS", 1, raising=False)
    for n in range(2):
        (tmp_path / f"bomb{n}.py").write_bytes(BOMB)
        (tmp_path / f"bomb{n}.js").write_bytes(BOMB)
    (tmp_path / "zz_after.py").write_text("def after_the_bombs():\n    return 1\n")
    index = CodeIndex(tmp_path)
    with StallWatch() as watch:
        index.refresh()
    assert watch.longest < 1.0
    for name in ("bomb0.py", "bomb1.py", "bomb0.js", "bomb1.js"):
        assert index.files[name].tags.skipped == (
            "it took the parser more than 0.5 s of processor time"
        )
    # one child after another went on with the files after each bomb
    assert [f.path for f in index.definitions("after_the_bombs")] == ["zz_after.py"]


def test_a_bomb_within_the_time_limit_is_indexed_out_of_process(tmp_path: Path) -> None:
    (tmp_path / "bomb.rb").write_bytes(b"x = a" + b".b" * 30_000 + b"\ndef tail_method\nend\n")
    (tmp_path / "small.py").write_text("def small_one():\n    return 1\n")
    index = CodeIndex(tmp_path)
    with StallWatch() as watch:
        assert index.refresh().parsed == 2
    assert watch.longest < 1.0
    assert index.files["bomb.rb"].tags.skipped == ""
    assert [f.path for f in index.definitions("tail_method")] == ["bomb.rb"]


def test_a_single_changed_bomb_is_parsed_out_of_process_too(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("def app():\n    return 1\n")
    index = CodeIndex(tmp_path)
    index.refresh()
    (tmp_path / "app.py").write_bytes(b"def app():\n    return 1\n" + BOMB[:40_000])
    with StallWatch() as watch:
        assert index.refresh().parsed == 1
    assert watch.longest < 1.0
    assert [f.path for f in index.definitions("app")] == ["app.py"]


def test_symlinks_are_not_indexed_nor_read_for_find_symbol(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("def secret_helper():\n    token = 'hunter2'\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "user.py").write_text("def user():\n    return shared_name()\n")
    (workspace / "lib.py").write_text("def shared_name():\n    return 1\n")
    index = CodeIndex(workspace)
    index.refresh()
    (workspace / "link.py").symlink_to(outside / "secret.py")
    (workspace / "user.py").unlink()  # a file the index lists becomes a link out
    (workspace / "user.py").symlink_to(outside / "secret.py")
    answer = describe(index, "shared_name")  # before the next refresh
    assert "hunter2" not in answer and "secret_helper" not in answer
    index.refresh()
    assert "link.py" not in index.files and "user.py" not in index.files
    assert index.definitions("secret_helper") == []


def test_a_folder_swapped_for_a_symlink_after_the_walk_is_not_read_through(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "mod.py").write_text("def leaked_secret():\n    return shared_name('hunter2')\n")
    workspace = tmp_path / "ws"
    (workspace / "pkg").mkdir(parents=True)
    (workspace / "pkg" / "mod.py").write_text("def mod():\n    return shared_name()\n")
    (workspace / "lib.py").write_text("def shared_name(x=None):\n    return x\n")
    index = CodeIndex(workspace)
    index.refresh()
    (workspace / "pkg" / "mod.py").unlink()
    (workspace / "pkg").rmdir()
    (workspace / "pkg").symlink_to(outside)  # listed as a folder by the walk, read later
    tags = parse_worker.tags_of(workspace, "pkg/mod.py")
    assert tags.skipped.startswith("unreadable: ") and tags.definitions == []
    assert "hunter2" not in describe(index, "shared_name")
