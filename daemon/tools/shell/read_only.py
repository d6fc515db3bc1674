"""run_shell in the read-only mode: only commands that change nothing.

The read-only (plan) mode lets the model look, never change. Of run_shell's
programs, `ls`, `cat` and `pwd` only read, and so do uv's subcommands that run
without asking (`uv --version`, `uv version`, `uv tree --frozen`, `uv pip
list|show|freeze|tree|check`). `make` is refused: its recipes are the
repository's own and may write anything (`make check` included, which often
writes caches and build output), and a plan can say which target to run. `uv
run`, `uv sync` and the programs allowed with `/allow-cmd` are refused too.
The command's own rules (`run_shell.py`) still apply after this check.
"""

from __future__ import annotations

from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.shell.run_shell import allowed_extras, parse_command
from coding_harness.daemon.tools.shell.uv_gate import plan_uv

READING_PROGRAMS = ("cat", "ls", "pwd")
READ_ONLY_COMMANDS = (
    "ls, cat, pwd, uv --version, uv version, uv tree --frozen and "
    "uv pip list|show|freeze|tree|check"
)


def check_read_only(ctx: ToolContext, command: str) -> None:
    """Refuse (`ToolRefusal`) a command that may change something; return for one that
    only reads. Nothing to check outside the read-only mode."""
    if not ctx.read_only:
        return
    argv = parse_command(command, allowed_extras(ctx.extra_commands))
    program = argv[0]
    if program in READING_PROGRAMS:
        return
    if program == "uv" and plan_uv(ctx.workspace, argv[1:]).access == "run":
        return
    why = (
        "its recipes may write files"
        if program == "make"
        else "it may change the workspace"
        if program == "uv"
        else "a program allowed with /allow-cmd may change the workspace"
    )
    raise ToolRefusal(
        f"refused: this session is in read-only mode (plan mode), where run_shell runs only "
        f"commands that change nothing ({READ_ONLY_COMMANDS}); '{program}' is not one of them: "
        f"{why}. Put the command in your plan as a step instead."
    )
