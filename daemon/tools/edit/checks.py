"""`make check` after an applied edit: run it, publish the result, phrase it for the model.

Build files that changed this turn without the user's approval are put to them
first (`build_files.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from coding_harness.daemon.tools.build_files import MAKEFILE_NAMES, confirm_build_files
from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.shell.process import run_process, shorten

CHECK_OUTPUT_CHARS = 2_000


@dataclass(kw_only=True, slots=True, frozen=True)
class CheckReport:
    """How `make check` went; `passed` is None when there was nothing to run."""

    passed: bool | None
    text: str  # the sentence(s) for the tool result


def has_makefile(root: Path) -> bool:
    return any((root / name).is_file() for name in MAKEFILE_NAMES)


async def run_check(ctx: ToolContext) -> CheckReport:
    """Run `make check` when there is a makefile, and record the outcome."""
    if not has_makefile(ctx.workspace.root):
        return CheckReport(
            passed=None,
            text="There is no Makefile in the workspace, so make check was skipped.",
        )
    declined = await confirm_build_files(ctx, "make check")
    if declined is not None:
        return CheckReport(passed=None, text=declined)
    try:
        argv = ctx.command_argv(["make", "check"])
    except ToolRefusal as refusal:
        return CheckReport(passed=None, text=f"make check was not run: {refusal}")
    ctx.events.emit("check.started", {"command": "make check"})
    result = await run_process(
        argv, ctx.workspace.root, ctx.check_timeout, env=ctx.command_environment()
    )
    passed = result.exit_code == 0
    output = shorten(result.output, CHECK_OUTPUT_CHARS)
    ctx.events.emit(
        "check.result", {"passed": passed, "exit_code": result.exit_code, "output": output}
    )
    ctx.outcome.last_check_failed = not passed
    if passed:
        return CheckReport(passed=True, text="make check passed.")
    if result.timed_out:
        text = f"make check FAILED: it timed out after {ctx.check_timeout:g} s.\n{output}"
    else:
        text = f"make check FAILED (exit {result.exit_code}):\n{output}"
    return CheckReport(passed=False, text=text)
