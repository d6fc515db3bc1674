"""run_shell with uv (uv_rules.py, uv_gate.py): read-only forms run, `uv run`/`uv sync`
are asked like an edit, everything else is refused; a case per rule.

A fake `uv` first on PATH records every run, so "it did not run" is observed.
The approver is scripted: one that was given no answers fails the test if asked.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any, Literal

import pytest

from coding_harness.daemon.agent.seams import ApprovalRequest
from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.shell.run_shell import run_shell
from coding_harness.daemon.tools.shell.uv_gate import index_notes
from coding_harness.daemon.tools.shell.uv_rules import UV_GLOBAL
from coding_harness.protocol.modes import READ_ONLY
from tests.support.tool_context import RecordingSink, ScriptedApprover, build_project, make_ctx, run


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return build_project(tmp_path)


def runs(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def shell(
    root: Path, command: str, *answers: tuple[Literal["yes", "no", "skip"], str], **flags: Any
) -> tuple[str, list[ApprovalRequest], RecordingSink]:
    approver = ScriptedApprover(*answers)
    ctx, sink = make_ctx(root, approver, **flags)
    try:
        result = run(run_shell(ctx, command))
    except ToolRefusal as refusal:
        result = str(refusal)
    return result, approver.requests, sink


UV_READ_ONLY = [
    "uv --version",
    "uv -V",
    "uv --help",
    "uv version",
    "uv version --short",
    "uv version --output-format json",
    "uv help run",
    "uv tree --frozen",
    "uv tree --frozen --depth 1 --invert",
    "uv --offline tree --frozen",
    "uv pip list",
    "uv pip list --format=json --exclude-editable",
    "uv pip show requests",
    "uv pip show --files requests httpx",
    "uv pip freeze",
    "uv pip tree -d 2",
    "uv pip check",
    "uv -q pip list",
    "uv pip -q list",
    "uv --directory src pip list",
]


@pytest.mark.parametrize("command", UV_READ_ONLY)
def test_read_only_uv_runs_without_asking(root: Path, uv_log: Path, command: str) -> None:
    result, asked, _ = shell(root, command)
    assert result == "fake uv ran\n(exit 0)"
    assert asked == []
    assert runs(uv_log) == [" ".join(shlex.split(command)[1:])]


UV_ASKED = [
    "uv run pytest",
    "uv run python -c 'print(1)'",
    "uv run -m pytest -q",
    "uv run --frozen --no-dev pytest",
    "uv run src/app.py",
    "uv run",
    "uv -q run pytest",
    "uv run -- pytest -x",
    "uv run --env-file=sub/ok.txt pytest",
    "uv sync",
    "uv sync --frozen --all-extras",
    "uv --offline sync --group docs",
]


@pytest.mark.parametrize("command", UV_ASKED)
def test_uv_run_and_sync_are_asked_and_no_runs_nothing(
    root: Path, uv_log: Path, command: str
) -> None:
    result, asked, _ = shell(root, command, ("no", ""))
    assert result == f"the user declined to run `{command_shown(command)}`; it did not run."
    assert runs(uv_log) == []
    [request] = asked
    assert request.kind == "command"
    assert request.diff == ""
    assert request.summary == f"run the command `{command_shown(command)}` in the workspace"
    assert request.allow == ("uv sync" if "sync" in command else "uv run")  # what "always" adds


def command_shown(command: str) -> str:
    return shlex.join(shlex.split(command))


@pytest.mark.parametrize("command", ["uv run pytest", "uv sync --frozen"])
def test_a_yes_runs_the_asked_command(root: Path, uv_log: Path, command: str) -> None:
    result, asked, _ = shell(root, command, ("yes", ""))
    assert result == "fake uv ran\n(exit 0)"
    assert len(asked) == 1
    assert runs(uv_log) == [command.removeprefix("uv ")]


def test_an_allowed_uv_run_runs_unasked_but_not_uv_sync_or_in_read_only(
    root: Path, uv_log: Path
) -> None:
    """`/allow-cmd uv run`, or "always" on a uv run: that pair only (issue 25, item 19)."""
    allowed = {"extra_commands": {"uv run"}}
    result, asked, _ = shell(root, "uv -q run pytest", **allowed)
    assert result == "fake uv ran\n(exit 0)" and asked == []
    _, asked, _ = shell(root, "uv sync", ("no", ""), **allowed)
    assert len(asked) == 1
    result, _, _ = shell(root, "uv run pytest", mode=READ_ONLY, **allowed)
    assert "read-only mode" in result
    assert runs(uv_log) == ["-q run pytest"]


def test_skip_gives_the_model_the_reason(root: Path, uv_log: Path) -> None:
    result, _, _ = shell(root, "uv run pytest", ("skip", "run make check instead"))
    assert result == (
        "the user skipped the command `uv run pytest`, so it did not run. "
        "Reason: run make check instead"
    )
    assert runs(uv_log) == []


def test_auto_approve_runs_it_without_asking(root: Path, uv_log: Path) -> None:
    result, asked, sink = shell(root, "uv run pytest", auto_approve=True)
    assert result == "fake uv ran\n(exit 0)"
    assert asked == []
    assert sink.of_kind("notice") == []  # nothing to point out: no package index set
    assert runs(uv_log) == ["run pytest"]


_SOURCES = "package sources the project declares"
_RESOLVES = "resolves packages from the network"
_NOT_DECLARED = "does not declare"

UV_REFUSED = [
    ("uv pip install requests", _RESOLVES),
    ("uv pip install -e src", _RESOLVES),
    ("uv pip sync requirements.txt", _RESOLVES),
    ("uv pip compile requirements.in", _RESOLVES),
    ("uv pip uninstall requests", "removes packages"),
    ("uv pip", "is not a uv command run_shell runs"),
    ("uv lock", _RESOLVES),
    ("uv lock --check", _RESOLVES),
    ("uv export", _RESOLVES),
    ("uv add requests", "changes the project's dependencies"),
    ("uv remove requests", "changes the project's dependencies"),
    ("uv tool run ruff", "tools fetched from the network"),
    ("uv tool install ruff", "tools fetched from the network"),
    ("uv build", "build backend"),
    ("uv publish", "only the user publishes"),
    ("uv init", "creates projects"),
    ("uv venv", "creates environments"),
    ("uv python install 3.13", "interpreters"),
    ("uv self update", "updates uv itself"),
    ("uv cache clean", "cache"),
    ("uv frobnicate", "is not a uv command run_shell runs"),
    ("uv run -", "standard input or the network"),
    ("uv run -q -", "standard input or the network"),
    ("uv run https://example.com/x.py", "standard input or the network"),
    ("uv run --with requests pytest", _NOT_DECLARED),
    ("uv run --with=requests pytest", _NOT_DECLARED),
    ("uv run --with-requirements req.txt pytest", _NOT_DECLARED),
    ("uv run --with-editable src pytest", _NOT_DECLARED),
    ("uv run --index-url https://evil.example/simple pytest", _SOURCES),
    ("uv --index-url=https://evil.example/simple pip list", _SOURCES),
    ("uv sync --extra-index-url https://evil.example/simple", _SOURCES),
    ("uv sync --index https://evil.example/simple", _SOURCES),
    ("uv sync --default-index https://evil.example/simple", _SOURCES),
    ("uv sync -f https://evil.example/wheels", _SOURCES),
    ("uv sync --find-links=https://evil.example/wheels", _SOURCES),
    ("uv run --allow-insecure-host evil.example pytest", _SOURCES),
    ("uv run --python 3.13 pytest", "another interpreter"),
    ("uv -p 3.12 run pytest", "another interpreter"),
    ("uv --config-file /tmp/uv.toml sync", "another file"),
    ("uv sync --upgrade", "upgrades or re-fetches"),
    ("uv run --script x.py", "is not an option run_shell allows for uv run"),
    ("uv run --directory /tmp pytest", "outside the workspace"),
    ("uv run --env-file=.env pytest", "hidden"),
    ("uv run ../x.py", "outside the workspace"),
    ("uv run python ../x.py", "outside the workspace"),
    ("uv run python .env", "hidden"),
    ("uv tree", "only with --frozen"),
    ("uv tree --locked --frozen", "is not an option run_shell allows for uv tree"),
    ("uv pip list --outdated", "is not an option run_shell allows for uv pip list"),
    ("uv pip list --system", "is not an option run_shell allows for uv pip list"),
    ("uv version --bump minor", "is not an option run_shell allows for uv version"),
    ("uv version 1.2.3", "takes no arguments"),
    ("uv pip show ../x", "is not a name"),
    ("uv --color=always pip list", "is not a value"),
    ("uv sync pytest", "takes no arguments"),
]


@pytest.mark.parametrize(("command", "why"), UV_REFUSED)
def test_other_uv_forms_are_refused_without_asking(
    root: Path, uv_log: Path, command: str, why: str
) -> None:
    """Refused even under -y: approval never reaches these forms."""
    result, asked, _ = shell(root, command, auto_approve=True)
    assert result.startswith("refused"), result
    assert why in result
    assert asked == []
    assert runs(uv_log) == []


def test_uvx_is_not_a_program_run_shell_runs(root: Path, uv_log: Path) -> None:
    result, _, _ = shell(root, "uvx ruff check")
    assert "'uvx' is not allowed" in result


def test_the_refusal_names_what_may_run(root: Path, uv_log: Path) -> None:
    result, _, _ = shell(root, "uv pip install requests")
    assert "run_shell runs uv --version, uv version, uv help, uv tree --frozen" in result
    assert "uv run and uv sync run once the user approves them" in result


@pytest.mark.parametrize("command", ["uv --version", "uv pip list", "uv run pytest", "uv sync"])
def test_no_uv_runs_under_dry_run(root: Path, uv_log: Path, command: str) -> None:
    result, asked, _ = shell(root, command, dry_run=True)
    assert "dry run" in result
    assert asked == []
    assert runs(uv_log) == []


@pytest.mark.parametrize("option", [o for o in UV_GLOBAL if o.refused], ids=lambda o: o.spelling())
def test_every_refused_uv_option_is_refused_before_and_after_the_subcommand(
    root: Path, uv_log: Path, option: Any
) -> None:
    forms = [f"-{option.short}"] if option.short else []
    forms += [f"--{name}" for name in option.long]
    for form in forms:
        for command in (f"uv {form} x sync", f"uv run {form} x pytest", f"uv sync {form}=x"):
            result, asked, _ = shell(root, command, auto_approve=True)
            assert option.refused in result, (command, result)
            assert asked == []
    assert runs(uv_log) == []


def test_the_project_package_index_is_named_in_the_question(root: Path, uv_log: Path) -> None:
    (root / "uv.toml").write_text('index-url = "https://evil.example/simple"\n')
    (root / "pyproject.toml").write_text(
        '[project]\nname = "demo"\n[[tool.uv.index]]\nurl = "https://mirror.example/simple"\n'
    )
    _, [request], _ = shell(root, "uv sync", ("no", ""))
    assert "https://evil.example/simple" in request.summary
    assert "https://mirror.example/simple" in request.summary
    _, _, sink = shell(root, "uv sync", auto_approve=True)
    [notice] = sink.of_kind("notice")
    assert "https://evil.example/simple" in notice["message"]


def test_settings_that_are_not_regular_files_are_not_read(root: Path) -> None:
    os.mkfifo(root / "uv.toml")  # opening it would wait for a writer forever
    (root / "pyproject.toml").write_text("not toml [[[")
    assert index_notes(root) == ""
