"""`make check` after an applied edit: run it, publish the result, phrase it for the model.

`changes_check` tells which files decide what `make check` runs: the makefiles,
any `.mk` file, pyproject.toml, and the files the workspace's makefile
includes (`include`, `-include`, `sinclude`; names with variables in them are
not expanded). An edit to one of them is never applied without asking.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.files import read_regular
from coding_harness.daemon.tools.shell.process import run_process, shorten

CHECK_OUTPUT_CHARS = 2_000
MAKEFILE_NAMES = ("GNUmakefile", "makefile", "Makefile")
CHECK_INPUTS = frozenset({*MAKEFILE_NAMES, "pyproject.toml"})
_INCLUDE = re.compile(r"^\s*(?:-include|sinclude|include)\s+(.+)$", re.MULTILINE)
_MAKEFILE_READ_LIMIT = 1_000_000


@dataclass(kw_only=True, slots=True, frozen=True)
class CheckReport:
    """How `make check` went; `passed` is None when there was nothing to run."""

    passed: bool | None
    text: str  # the sentence(s) for the tool result


def has_makefile(root: Path) -> bool:
    return any((root / name).is_file() for name in MAKEFILE_NAMES)


def changes_check(root: Path, rel: str) -> bool:
    """Whether an edit to `rel` (relative to `root`) changes what `make check` runs."""
    name = PurePosixPath(rel).name
    return name in CHECK_INPUTS or name.endswith(".mk") or rel in _included(root)


def _included(root: Path) -> set[str]:
    """The files the workspace's makefiles include, relative to the workspace."""
    found: set[str] = set()
    for name in MAKEFILE_NAMES:
        try:
            data, _ = read_regular(root / name, name, _MAKEFILE_READ_LIMIT)
        except ToolRefusal:  # none, or not a regular file (a FIFO would block make too)
            continue
        for words in _INCLUDE.findall(data.decode("utf-8", "replace")):
            for word in words.split("#", 1)[0].split():
                if "$" not in word:
                    found.add(PurePosixPath(word).as_posix().removeprefix("./"))
    return found


async def run_check(ctx: ToolContext) -> CheckReport:
    """Run `make check` when there is a makefile, and record the outcome."""
    if not has_makefile(ctx.workspace.root):
        return CheckReport(
            passed=None,
            text="There is no Makefile in the workspace, so make check was skipped.",
        )
    try:
        argv = ctx.command_argv(["make", "check"])
    except ToolRefusal as refusal:
        return CheckReport(passed=None, text=f"make check was not run: {refusal}")
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
