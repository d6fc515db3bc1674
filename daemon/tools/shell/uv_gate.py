"""`uv` under run_shell: which subcommand a command line is, and whether it may run.

Read-only subcommands (`uv_rules.UV_COMMANDS` with access "run") run like
any other command. `uv run` and `uv sync` run project code and may download
packages, so they are put to the user the way an edit is: the exact command,
plus any package index the project's uv settings name, through the session's
approver; `-y` approves them as it approves edits, but the accept-edits mode
does not (it is about writes, and commands keep their rules), and the read-only
mode refuses them. Every other subcommand is refused with its reason. Under
--dry-run no uv runs at all (see `run_shell.py`).
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import stat
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coding_harness.daemon.agent.seams import ApprovalDecision, ApprovalRequest, FailedResult
from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.shell.argv_rules import (
    Parsed,
    check_option_paths,
    check_words,
    parse,
)
from coding_harness.daemon.tools.shell.command_rules import Operands, Syntax
from coding_harness.daemon.tools.shell.uv_rules import (
    UV_COMMANDS,
    UV_GLOBAL,
    UV_GROUPS,
    UV_REFUSED,
    UV_TOP,
    UvAccess,
)
from coding_harness.daemon.tools.workspace import Workspace

_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,100}")
_SETTINGS_BYTES = 1 << 20
_SOURCE_KEYS = ("index-url", "extra-index-url", "find-links", "index", "allow-insecure-host")
_NOTE_CHARS = 400


@dataclass(kw_only=True, slots=True, frozen=True)
class UvPlan:
    """A checked uv command line: its subcommand words and how it may run."""

    words: tuple[str, ...]  # () for `uv --version` and the like
    access: UvAccess


def plan_uv(workspace: Workspace, args: list[str]) -> UvPlan:
    """Check a uv command line (the words after `uv`); `ToolRefusal` when it may not run."""
    top = parse("uv", UV_TOP, args, stop_at_operand=True)
    check_option_paths(workspace, top)
    if not top.operands:
        return UvPlan(words=(), access="run")
    words, rest = _subcommand(workspace, top.operands)
    command = UV_COMMANDS.get(words)
    if command is None:
        raise _refusal(words)
    label = "uv " + " ".join(words)
    own = command.syntax
    syntax = Syntax(
        options=(*own.options, *UV_GLOBAL), operands=own.operands, requires=own.requires
    )
    parsed = parse(label, syntax, rest, stop_at_operand=own.operands == "command")
    check_option_paths(workspace, parsed)
    _check_operands(workspace, label, own.operands, parsed)
    return UvPlan(words=words, access=command.access)


def _subcommand(workspace: Workspace, operands: list[str]) -> tuple[tuple[str, ...], list[str]]:
    """(`pip`, `list`) and the words after them; global options may sit in between."""
    first, rest = operands[0], operands[1:]
    if first not in UV_GROUPS:
        return (first,), rest
    inner = parse(f"uv {first}", Syntax(options=UV_GLOBAL), rest, stop_at_operand=True)
    check_option_paths(workspace, inner)
    if not inner.operands:
        return (first,), []
    return (first, inner.operands[0]), inner.operands[1:]


def _refusal(words: tuple[str, ...]) -> ToolRefusal:
    shown = shlex.join(["uv", *words])
    reason = UV_REFUSED.get(words) or UV_REFUSED.get(words[:1])
    why = f"is not allowed: {reason}" if reason else "is not a uv command run_shell runs"
    return ToolRefusal(f"refused: '{shown}' {why}. {allowed_uv_commands()}")


def allowed_uv_commands() -> str:
    """One sentence naming the uv commands run_shell runs, and those it asks about."""
    free = ["uv --version"]
    asked: list[str] = []
    for words, command in UV_COMMANDS.items():
        name = " ".join(["uv", *words, *(f"--{n}" for n in command.syntax.requires)])
        (free if command.access == "run" else asked).append(name)
    return (
        f"run_shell runs {', '.join(free)}; {' and '.join(asked)} run once the user approves them"
    )


def _check_operands(workspace: Workspace, label: str, kind: Operands, parsed: Parsed) -> None:
    operands = parsed.operands
    if kind == "none" and operands:
        raise ToolRefusal(f"refused: {label} takes no arguments here (got {operands[0]!r})")
    if kind == "names":
        for word in operands:
            if not _NAME.fullmatch(word):
                raise ToolRefusal(f"refused: {word!r} is not a name {label} accepts")
    if kind == "command" and operands:
        program = operands[0]
        if program == "-" or _URL.match(program):
            raise ToolRefusal(
                f"refused: '{label} {program}' would run code from standard input or the "
                "network; run a script or module that is in the workspace"
            )
        check_words(workspace, operands)


async def ask_to_run(ctx: ToolContext, argv: list[str]) -> str | None:
    """Put the command to the user; None when it may run, else the tool result."""
    if ctx.read_only:
        raise ToolRefusal(
            f"refused: `{shlex.join(argv)}` may change the workspace, and this session is in "
            "read-only mode (plan mode); put it in your plan as a step instead"
        )
    # Program and subcommand (`uv run`): what `/allow-cmd` and an "always" answer add.
    allow = " ".join(["uv", *plan_uv(ctx.workspace, argv[1:]).words])
    if allow in ctx.extra_commands:
        return None
    notes = await asyncio.to_thread(index_notes, ctx.workspace.root)
    shown = shlex.join(argv)
    note = f" (note: {notes})" if notes else ""
    if ctx.auto_approve:
        if notes:
            ctx.events.emit("notice", {"message": f"running `{shown}`{note}"})
        return None
    summary = f"run the command `{shown}` in the workspace{note}"
    request = ApprovalRequest(kind="command", path="", diff="", summary=summary, allow=allow)
    decision = await ctx.approver.ask(request)
    if decision.decision == "yes":
        return None
    return declined_result(shown, decision)


def declined_result(shown: str, decision: ApprovalDecision) -> str:
    """The tool result of a command the user said no to, or skipped (with the reason)."""
    reason = decision.reason.strip()
    if decision.decision == "skip":
        return FailedResult(
            f"the user skipped the command `{shown}`, so it did not run. "
            f"Reason: {reason or '(no reason given)'}"
        )
    said = f" Reason: {reason}" if reason else ""
    return FailedResult(f"the user declined to run `{shown}`; it did not run.{said}")


def index_notes(root: Path) -> str:
    """The package sources the workspace's uv settings name, for the approval prompt."""
    found: list[str] = []
    for name, table_path in (("uv.toml", ()), ("pyproject.toml", ("tool", "uv"))):
        settings = _read_toml(root / name)
        if settings is None:
            continue
        for key in table_path:
            settings = settings.get(key) if isinstance(settings, dict) else None
        if isinstance(settings, dict):
            found.extend(_sources(name, settings))
            found.extend(_sources(f"{name} pip", settings.get("pip")))
    text = "; ".join(found)
    if not text:
        return ""
    text = text if len(text) <= _NOTE_CHARS else text[:_NOTE_CHARS] + "..."
    return f"the project's uv settings name package sources: {text}"


def _sources(where: str, table: Any) -> list[str]:
    if not isinstance(table, dict):
        return []
    found = []
    for key in _SOURCE_KEYS:
        values = table.get(key)
        for value in values if isinstance(values, list) else [values]:
            url = value.get("url") if isinstance(value, dict) else value
            if isinstance(url, str):
                found.append(f"{where} {key} = {url!r}")
    return found


def _read_toml(path: Path) -> dict[str, Any] | None:
    """A small regular file's TOML; None for anything else (a FIFO is never opened)."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > _SETTINGS_BYTES:
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as handle:
            return tomllib.loads(handle.read(_SETTINGS_BYTES).decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
