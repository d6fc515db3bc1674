"""run_shell: the whitelist, no shell syntax, per-program rules, filtered ls output."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from coding_harness.daemon.tools.shell.run_shell import filter_ls_output
from tests.support.tool_context import build_project, process_gone, read_pid, shell

MAKEFILE = (
    "hello:\n"
    "\t@echo hello from make\n"
    "show:\n"
    "\t@echo NAME=$(NAME)\n"
    "sleepy:\n"
    "\tsleep 1000 & echo $$! > bg.pid; sleep 1000\n"
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = build_project(tmp_path)
    (project / "Makefile").write_text(MAKEFILE)
    return project


@pytest.mark.parametrize(
    "command",
    ["rm -rf src", "/bin/ls", "./ls", "bash -c id", "python3 -c 1", "sh", "env", "LS"],
)
def test_programs_off_the_whitelist_are_refused(root: Path, command: str) -> None:
    result = shell(root, command)
    assert "is not allowed" in result
    assert "cat, ls, make, pwd, uv" in result
    assert (root / "src").is_dir()


@pytest.mark.parametrize(
    "command",
    [
        "ls; id",
        "ls && id",
        "ls $(id)",
        "ls | sh",
        "ls `id`",
        "ls ${HOME}",
        "cat README.md > copy.txt",
        "cat README.md 2>err.txt",
        "ls & id",
    ],
)
def test_shell_syntax_never_runs_a_second_program(root: Path, command: str) -> None:
    result = shell(root, command)
    assert result.startswith("refused")
    assert "uid=" not in result
    assert not (root / "copy.txt").exists()
    assert not (root / "err.txt").exists()


# Every make target runs unasked (`/allow-cmd make`).
MAKE = frozenset({"make"})


def test_unterminated_quote_fails_closed(root: Path) -> None:
    assert "could not split" in shell(root, "cat 'README.md")
    assert "empty command" in shell(root, "   ")


def test_allowed_commands_run_in_the_workspace(root: Path) -> None:
    assert shell(root, "cat README.md") == "# Demo\n(exit 0)"
    assert shell(root, "pwd") == f"{root}\n(exit 0)"
    # A target other than check asks in the ask mode (test_make_gate.py); allowed here.
    assert shell(root, "make hello", extra_commands=MAKE) == "hello from make\n(exit 0)"
    # Command-line variables are refused now (`make show NAME=world`): see test_tools_command_rules.
    assert shell(root, "make show", extra_commands=MAKE) == "NAME=\n(exit 0)"
    missing = shell(root, "cat nope.txt")
    assert "No such file" in missing
    assert missing.endswith("(exit 1)")


def test_ls_never_shows_hidden_entries(root: Path) -> None:
    (root / "backup.d~").mkdir()
    (root / "backup.d~" / "inner.txt").write_text("x")
    for command in ("ls", "ls -l", "ls -R", "ls -1 src sub"):
        result = shell(root, command)
        assert result.endswith("(exit 0)"), result
        for hidden in (".env", "backup~", "#lock#", ".git", "backup.d~", "inner.txt"):
            assert hidden not in result, (command, result)
    assert "README.md" in shell(root, "ls")


@pytest.mark.parametrize(
    "command", ["ls -a", "ls -la", "ls -A src", "ls --all", "ls --alm", "ls -f"]
)
def test_ls_options_that_show_hidden_files_are_refused(root: Path, command: str) -> None:
    assert "hidden" in shell(root, command)


def test_filter_ls_output_drops_hidden_lines_and_sections() -> None:
    listing = ".:\nREADME.md\nfoo~\n#x#\n\n./old~:\nsecret\n\n./src:\napp.py\n"
    assert filter_ls_output(listing) == ".:\nREADME.md\n\n\n./src:\napp.py\n"


@pytest.mark.parametrize(
    "command",
    [
        "make -f /tmp/evil.mk",
        "make -fevil.mk",
        "make -kf evil.mk",
        "make --file=evil.mk",
        "make --makefile evil.mk",
        "make --fil=evil.mk",
        "make -C /",
        "make -C sub",
        "make --directory=sub",
        "make --dir=sub",
        "make --eval=all:;id",
        "make --eval x",
        "make -E x",
        "make -I /usr/include",
        "make --include-dir=/tmp",
    ],
)
def test_make_options_that_change_makefile_or_folder_are_refused(root: Path, command: str) -> None:
    result = shell(root, command)
    assert result.startswith("refused")
    assert "(exit" not in result


@pytest.mark.parametrize(
    "command",
    [
        "make hello SHELL=/bin/bash",
        "make hello shell=sh",
        "make hello MAKEFLAGS=-f/tmp/x",
        "make hello MAKEFILES=evil.mk",
        "make show NAME=$(shell id)",
        "make show NAME=`id`",
        "make show NAME!=id",
        "make show .SHELLFLAGS=-ec",
        "make show PREFIX=/usr",
    ],
)
def test_make_variables_that_could_run_commands_are_refused(root: Path, command: str) -> None:
    result = shell(root, command)
    assert result.startswith("refused")
    assert "uid=" not in result


def test_make_target_arguments_are_held_to_the_workspace(root: Path) -> None:
    assert "outside the workspace" in shell(root, "make ../x")
    assert "hidden" in shell(root, "make .env")
    assert shell(root, "make -j2 hello", extra_commands=MAKE).endswith("(exit 0)")


def test_uv_is_refused_under_dry_run(root: Path) -> None:
    result = shell(root, "uv run pytest", dry_run=True)
    assert "dry run" in result
    assert "preview" in result


@pytest.mark.parametrize(
    "command",
    ["uv run -", "uv run https://example.com/x.py", "uv run -q -", "uv run -- -"],
)
def test_uv_run_from_stdin_or_network_is_refused(root: Path, command: str) -> None:
    assert "standard input or the network" in shell(root, command)


def test_uv_paths_outside_are_refused(root: Path) -> None:
    assert "outside the workspace" in shell(root, "uv run --directory /tmp pytest")
    assert "hidden" in shell(root, "uv run --env-file=.env app.py")
    # Choosing another interpreter is refused outright now, whatever its path.
    assert "another interpreter" in shell(root, "uv run -p/usr/bin/python3 app.py")


def test_cat_refuses_fifos(root: Path) -> None:
    os.mkfifo(root / "pipe")
    started = time.monotonic()
    assert "named pipe" in shell(root, "cat pipe")
    assert time.monotonic() - started < 1


def test_command_timeout_kills_the_group(root: Path) -> None:
    started = time.monotonic()
    result = shell(root, "make sleepy", command_timeout=0.5, extra_commands=MAKE)
    assert time.monotonic() - started < 3
    assert "timed out after 0.5 s" in result
    assert process_gone(read_pid(root / "bg.pid"))
