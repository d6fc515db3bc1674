"""The check after an applied edit: choose it, run it, publish the result, phrase it.

The check is `agent.check_command`, else the project's own (`check_command.py`:
`make check` or `make test`, pytest, `npm test`, `cargo test`, `go test ./...`).
The first time a turn runs one, a notice says which it chose and why; when the
project has none, a notice says once per turn "not verified: no check command",
and the turn's `check` stays null. It runs as `make check` always did: in the
turn's sandbox, under `agent.check_timeout`, after build files that changed this
turn without the user's approval were put to them (`build_files.py`), with
`PYTHONDONTWRITEBYTECODE=1` and the edited files' cached bytecode removed first
(`bytecode.py`), so it never passes on the code as it was before the edit.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from coding_harness.daemon.tools.build_files import confirm_build_files
from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.edit.bytecode import NO_BYTECODE, remove_stale_bytecode
from coding_harness.daemon.tools.edit.check_command import CheckCommand, choose_check
from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.shell.process import run_process, shorten

CHECK_OUTPUT_CHARS = 2_000
NOT_VERIFIED = (
    "not verified: no check command (set agent.check_command, or add a Makefile "
    "check target or tests)"
)
NO_CHECK_TEXT = (
    "The edit was not verified: the project has no check command (no Makefile check or "
    "test target, no pytest, npm, cargo or go tests, and no agent.check_command)."
)


@dataclass(kw_only=True, slots=True, frozen=True)
class CheckReport:
    """How the check went; `passed` is None when nothing ran."""

    passed: bool | None
    text: str  # the sentence(s) for the tool result


async def run_check(ctx: ToolContext) -> CheckReport:
    """Run the workspace's check, and record the outcome."""
    check = await asyncio.to_thread(choose_check, ctx.workspace.root, ctx.check_command)
    if check is None:
        _tell_once(ctx, NOT_VERIFIED, not_verified=True)
        return CheckReport(passed=None, text=NO_CHECK_TEXT)
    _tell_once(ctx, f"check: {check.label} ({_why(check)})")
    declined = await confirm_build_files(ctx, check.label)
    if declined is not None:
        return CheckReport(passed=None, text=declined)
    try:
        argv = ctx.command_argv(list(check.argv))
    except ToolRefusal as refusal:
        return CheckReport(passed=None, text=f"{check.label} was not run: {refusal}")
    await asyncio.to_thread(
        remove_stale_bytecode, ctx.workspace.root, list(ctx.outcome.files_changed)
    )
    env = {**ctx.command_environment(), **NO_BYTECODE}
    ctx.events.emit("check.started", {"command": check.label})
    result = await run_process(argv, ctx.workspace.root, ctx.check_timeout, env=env)
    passed = result.exit_code == 0
    output = shorten(result.output, CHECK_OUTPUT_CHARS)
    ctx.events.emit(
        "check.result",
        {
            "command": check.label,
            "passed": passed,
            "exit_code": result.exit_code,
            "output": output,
        },
    )
    ctx.outcome.last_check_failed = not passed
    ctx.outcome.check = {"command": check.label, "passed": passed}
    return _report(check, passed, result.exit_code, result.timed_out, output, ctx.check_timeout)


def _report(
    check: CheckCommand,
    passed: bool,
    exit_code: int | None,
    timed_out: bool,
    output: str,
    timeout: float,
) -> CheckReport:
    if passed:
        return CheckReport(passed=True, text=f"{check.label} passed.")
    if timed_out:
        text = f"{check.label} FAILED: it timed out after {timeout:g} s.\n{output}"
    else:
        text = f"{check.label} FAILED (exit {exit_code}):\n{output}"
    return CheckReport(passed=False, text=text)


def _why(check: CheckCommand) -> str:
    return "configured" if check.source == "agent.check_command" else f"found: {check.source}"


def _tell_once(ctx: ToolContext, message: str, *, not_verified: bool = False) -> None:
    """One notice per turn for each thing to say: the check chosen, or that there is none."""
    if ctx.outcome.check_told == message:
        return
    ctx.outcome.check_told = message
    data: dict[str, object] = {"message": message}
    if not_verified:
        data["kind"] = "not_verified"
    ctx.events.emit("notice", data)
