"""Which check runs after an edit, and that it never passes on stale bytecode."""

from __future__ import annotations

import importlib.util
import json
import os
import py_compile
import sys
from pathlib import Path

import pytest

from coding_harness.daemon.tools.edit.bytecode import remove_stale_bytecode
from coding_harness.daemon.tools.edit.check_command import choose_check
from coding_harness.daemon.tools.edit.checks import NOT_VERIFIED, run_check
from tests.support.tool_context import make_ctx, run


def label(root: Path, configured: str | tuple[str, ...] | None = None) -> str | None:
    found = choose_check(root, configured)
    return None if found is None else found.label


def test_the_configured_check_wins_over_the_projects(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text("check:\n\ttrue\n")
    shell = choose_check(tmp_path, "pytest -q && mypy .")
    assert shell is not None and shell.argv == ("/bin/sh", "-c", "pytest -q && mypy .")
    assert shell.source == "agent.check_command"
    argv = choose_check(tmp_path, ("cargo", "test", "--quiet"))
    assert argv is not None and argv.argv == ("cargo", "test", "--quiet")
    assert argv.label == "cargo test --quiet"


def test_a_makefile_check_target_then_its_test_target(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text("lint test:\n\ttrue\ncheck: lint\n\ttrue\n")
    assert label(tmp_path) == "make check"
    (tmp_path / "Makefile").write_text("CHECK := yes\ncheck = no\nall test: build\n\ttrue\n")
    assert label(tmp_path) == "make test"


def test_a_target_in_an_included_makefile_counts(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text("include rules.mk\n")
    (tmp_path / "rules.mk").write_text("check:\n\ttrue\n")
    assert label(tmp_path) == "make check"


def test_a_makefile_without_those_targets_falls_through_to_pytest(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text("build:\n\ttrue\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_calc.py").write_text("def test_x(): pass\n")
    assert label(tmp_path) == "python3 -m pytest -q"
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").write_text("")
    assert label(tmp_path) == ".venv/bin/python -m pytest -q"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pytest.ini", "[pytest]\n"),
        ("conftest.py", ""),
        ("pyproject.toml", "[tool.pytest.ini_options]\naddopts = '-q'\n"),
        ("setup.cfg", "[tool:pytest]\n"),
        ("tox.ini", "[pytest]\n"),
        ("calc_test.py", ""),
    ],
)
def test_pytest_is_found_by_its_files(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / name).write_text(text)
    assert label(tmp_path) == "python3 -m pytest -q"


def test_npm_cargo_and_go(tmp_path: Path) -> None:
    placeholder = 'echo "Error: no test specified" && exit 1'
    (tmp_path / "package.json").write_text(json.dumps({"scripts": {"test": placeholder}}))
    assert label(tmp_path) is None
    (tmp_path / "package.json").write_text(json.dumps({"scripts": {"test": "vitest run"}}))
    assert label(tmp_path) == "npm test"
    (tmp_path / "package.json").unlink()
    (tmp_path / "Cargo.toml").write_text("[package]\n")
    assert label(tmp_path) == "cargo test"
    (tmp_path / "Cargo.toml").unlink()
    (tmp_path / "go.mod").write_text("module x\n")
    assert label(tmp_path) == "go test ./..."


def test_nothing_to_run_is_said_once_per_turn(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    ctx, sink = make_ctx(tmp_path)
    first, second = run(run_check(ctx)), run(run_check(ctx))
    assert first.passed is None and "not verified" in first.text
    assert second.passed is None
    assert [n["message"] for n in sink.of_kind("notice")] == [NOT_VERIFIED]
    assert ctx.outcome.check is None


def test_the_chosen_check_is_named_and_recorded(tmp_path: Path) -> None:
    ctx, sink = make_ctx(tmp_path, check_command="exit 3")
    report = run(run_check(ctx))
    assert report.passed is False and report.text.startswith("exit 3 FAILED (exit 3)")
    assert [n["message"] for n in sink.of_kind("notice")] == ["check: exit 3 (configured)"]
    assert sink.of_kind("check.result")[0]["command"] == "exit 3"
    assert ctx.outcome.check == {"command": "exit 3", "passed": False}
    assert ctx.outcome.exit_code() == 2


def _stale_bytecode_project(root: Path) -> None:
    """calc.py compiled while right, then made wrong in the same second at the same size:
    Python's timestamp check takes the cached bytecode for the new source."""
    source = root / "calc.py"
    source.write_text("def add(a, b):\n    return a + b\n")
    py_compile.compile(
        str(source),
        cfile=importlib.util.cache_from_source(str(source)),
        invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP,
    )
    was = source.stat()
    source.write_text("def add(a, b):\n    return a - b\n")
    os.utime(source, ns=(was.st_atime_ns, was.st_mtime_ns))
    (root / "Makefile").write_text(
        f"check:\n\t{sys.executable} -c 'import calc; assert calc.add(2, 3) == 5, \"wrong\"'\n"
    )


def test_a_check_never_passes_on_the_bytecode_of_the_code_before_the_edit(
    tmp_path: Path,
) -> None:
    _stale_bytecode_project(tmp_path)
    ctx, _ = make_ctx(tmp_path)
    ctx.outcome.record_change("calc.py")
    report = run(run_check(ctx))
    assert report.passed is False, report.text
    assert "wrong" in report.text
    assert not list((tmp_path / "__pycache__").iterdir())  # nor does it leave any


def test_only_the_cached_bytecode_of_changed_python_files_goes(tmp_path: Path) -> None:
    cache = tmp_path / "pkg" / "__pycache__"
    cache.mkdir(parents=True)
    for name in ("calc.cpython-311.pyc", "calc.cpython-312.opt-1.pyc", "other.cpython-311.pyc"):
        (cache / name).write_bytes(b"")
    removed = remove_stale_bytecode(tmp_path, ["pkg/calc.py", "pkg/readme.md"])
    assert sorted(removed) == [
        "pkg/__pycache__/calc.cpython-311.pyc",
        "pkg/__pycache__/calc.cpython-312.opt-1.pyc",
    ]
    assert [p.name for p in cache.iterdir()] == ["other.cpython-311.pyc"]


def test_a_cache_folder_that_is_a_symlink_is_left_alone(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "calc.cpython-311.pyc").write_bytes(b"")
    (tmp_path / "__pycache__").symlink_to(elsewhere)
    assert remove_stale_bytecode(tmp_path, ["calc.py"]) == []
    assert (elsewhere / "calc.cpython-311.pyc").exists()
