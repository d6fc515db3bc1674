"""run_shell: a handful of whitelisted programs, run without any shell.

The command line is split like a POSIX shell would split words, and nothing
more: no pipes, no `;`, no `$(...)`, no globbing, no control characters. Only
make, ls, pwd, cat and uv may run, by bare name, plus the programs the user
allowed (`/allow-cmd NAME`, or narrowed to a subcommand, `/allow-cmd git log`:
`allow_list.py`; carried in `ToolContext.extra_commands`). Each built-in program's options are read
against its table in `command_rules.py` (an allow-list: an option not listed
is refused), and every word that could name a file is held to the workspace
rules (inside, not hidden). make may not be given variables or be pointed at
another makefile or folder, and a target other than `check` is put to the user
in the ask mode (`make_gate.py`); uv runs its read-only subcommands, asks the
user before `uv run` and `uv sync`, and refuses the rest (`uv_gate.py`).
"""

from __future__ import annotations

import re
import shlex
import stat
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from pathlib import Path

from coding_harness.daemon.tools.build_files import confirm_build_files
from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.files import describe_kind
from coding_harness.daemon.tools.shell.allow_list import narrowed_to, programs
from coding_harness.daemon.tools.shell.argv_rules import (
    Parsed,
    check_option_paths,
    check_words,
    parse,
)
from coding_harness.daemon.tools.shell.command_rules import (
    CAT,
    LS,
    MAKE,
    MAKE_ASSIGNMENT_REFUSED,
    PWD,
)
from coding_harness.daemon.tools.shell.make_gate import ask_to_make, make_access
from coding_harness.daemon.tools.shell.process import ProcessResult, run_process
from coding_harness.daemon.tools.shell.uv_gate import ask_to_run, plan_uv
from coding_harness.daemon.tools.workspace import Workspace, is_hidden_name

ALLOWED = ("cat", "ls", "make", "pwd", "uv")
_OPERATOR = re.compile(r"[;|&`]|\$\(|\$\{|^\d*[<>]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_COMMAND_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")
# ls prints '?' for control characters in file names, so none reach the output.
_LS_SAFE_NAMES = "-q"


async def run_shell(ctx: ToolContext, command: str) -> str:
    """Run one whitelisted command in the workspace and report its output."""
    argv = parse_command(command, allowed_extras(ctx.extra_commands))
    if check_command(ctx, argv) == "ask":
        asking = ask_to_make if argv[0] == "make" else ask_to_run
        declined = await asking(ctx, argv)
        if declined is not None:
            return declined
    if argv[0] == "make" or argv[:2] in (["uv", "run"], ["uv", "sync"]):
        # They run what the build files say: ones changed this turn are shown first.
        declined = await confirm_build_files(ctx, shlex.join(argv))
        if declined is not None:
            return declined
    run_argv = [argv[0], _LS_SAFE_NAMES, *argv[1:]] if argv[0] == "ls" else argv
    result = await run_process(
        ctx.command_argv(run_argv),
        ctx.workspace.root,
        ctx.command_timeout,
        env=ctx.command_environment(),
    )
    output = filter_ls_output(result.output) if argv[0] == "ls" else result.output
    return _report(output, result, ctx.command_timeout)


def allowed_extras(names: AbstractSet[str]) -> frozenset[str]:
    """The programs the allow-list names that are bare, visible command names (`git`
    for `git log` too; never an MCP tool's entry)."""
    return frozenset(
        name
        for name in programs(names)
        if _COMMAND_NAME.fullmatch(name) and not is_hidden_name(name)
    )


def parse_command(command: str, extras: frozenset[str] = frozenset()) -> list[str]:
    """Split into words, refusing anything a shell would treat as syntax."""
    programs = ", ".join(sorted(set(ALLOWED) | extras))
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise ToolRefusal(f"refused: could not split the command into words ({exc})") from None
    if not argv:
        raise ToolRefusal(f"refused: empty command; allowed programs: {programs}")
    if argv[0] not in ALLOWED and argv[0] not in extras:
        raise ToolRefusal(
            f"refused: '{argv[0]}' is not allowed. run_shell runs only {programs}, "
            "named without a path"
        )
    for word in argv[1:]:
        if _OPERATOR.search(word):
            raise ToolRefusal(
                f"refused: {word!r} looks like shell syntax, and no shell is used. Pipes, "
                "';', '&&', redirections and $(...) are not available: run one command per call"
            )
        if control := _CONTROL.search(word):
            what = "a NUL byte" if control.group() == "\x00" else "a control character"
            raise ToolRefusal(f"refused: {word!r} holds {what}, which no command needs")
    return argv


def check_command(ctx: ToolContext, argv: list[str]) -> str:
    """Apply the program's rules; "run" when it may run now, "ask" when the user decides."""
    program, args = argv[0], argv[1:]
    if program not in ALLOWED:  # a program the user allowed for this session
        _check_extra(ctx, program, args)
        return "run"
    if program == "make":
        return make_access(ctx, _check_make(ctx.workspace, args))
    if program == "uv":
        if ctx.dry_run:
            raise ToolRefusal(
                "refused: uv is unavailable in this run because the user asked for a dry run "
                "(--dry-run): they only want to preview the proposed diffs, and uv can write "
                "files"
            )
        return plan_uv(ctx.workspace, args).access
    rules: dict[str, Callable[[Workspace, list[str]], None]] = {
        "ls": _check_ls,
        "cat": _check_cat,
        "pwd": _check_pwd,
    }
    rules[program](ctx.workspace, args)
    return "run"


def _check_extra(ctx: ToolContext, program: str, args: list[str]) -> None:
    if ctx.dry_run:
        raise ToolRefusal(
            f"refused: '{program}' was allowed for this session, but this is a dry run "
            "(--dry-run), in which only the built-in programs run, since others may write files"
        )
    if program not in ctx.extra_commands:  # narrowed to some of its subcommands
        allowed = narrowed_to(ctx.extra_commands, program)
        if not args or args[0] not in allowed:
            shown = ", ".join(f"{program} {word}" for word in allowed)
            asked = shlex.join([program, *args[:1]])
            raise ToolRefusal(
                f"refused: of {program}, only {shown} may run in this session, and "
                f"`{asked}` is not one of them (the subcommand must be the first word). "
                f"The user can allow it with /allow-cmd {asked}"
            )
    check_words(ctx.workspace, args)


def _check_make(workspace: Workspace, args: list[str]) -> Parsed:
    parsed = parse("make", MAKE, args)
    for word in parsed.operands:
        if "=" in word:
            raise ToolRefusal("refused: " + MAKE_ASSIGNMENT_REFUSED.format(word=word))
        workspace.resolve_visible(word)
    return parsed


def _check_ls(workspace: Workspace, args: list[str]) -> None:
    parsed = parse("ls", LS, args)
    check_option_paths(workspace, parsed)
    for word in parsed.operands:
        workspace.resolve_visible(word)


def _check_cat(workspace: Workspace, args: list[str]) -> None:
    for word in parse("cat", CAT, args).operands:
        real = workspace.resolve_visible(word)
        if real.is_relative_to("/proc") or real.is_relative_to("/dev"):
            raise ToolRefusal(f"refused: cat does not read '{word}'")
        try:
            mode = real.stat().st_mode
        except OSError:
            continue  # cat itself reports a missing file
        if not stat.S_ISREG(mode):
            raise ToolRefusal(f"refused: '{word}' is {describe_kind(mode)}; cat reads only files")


def _check_pwd(workspace: Workspace, args: list[str]) -> None:
    if parse("pwd", PWD, args).operands:
        raise ToolRefusal("refused: pwd takes no arguments; it prints the workspace root")


def filter_ls_output(output: str) -> str:
    """Drop hidden entries (and sections of hidden folders under `ls -R`)."""
    kept: list[str] = []
    skipping = False
    for line in output.splitlines():
        stripped = line.strip()
        if stripped.endswith(":") and " " not in stripped:  # a folder heading
            skipping = _has_hidden_part(stripped[:-1])
            hidden = skipping
        else:
            skipping = skipping and bool(stripped)
            hidden = skipping or any(is_hidden_name(word) for word in stripped.split())
        if not hidden:
            kept.append(line)
    return "\n".join(kept) + ("\n" if kept else "")


def _has_hidden_part(path: str) -> bool:
    return any(is_hidden_name(part) for part in Path(path).parts)


def _report(output: str, result: ProcessResult, timeout: float) -> str:
    if output and not output.endswith("\n"):
        output += "\n"
    if result.timed_out:
        return (
            f"{output}(timed out after {timeout:g} s: the command and everything it "
            "started were stopped)"
        )
    if result.exit_code is None:
        return f"{output}(killed by a signal)"
    return f"{output}(exit {result.exit_code})"
