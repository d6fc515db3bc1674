"""run_shell: a handful of whitelisted programs, run without any shell.

The command line is split like a POSIX shell would split words, and nothing
more: no pipes, no `;`, no `$(...)`, no globbing. Only make, ls, pwd, cat and
uv may run, by bare name, plus the programs the user allowed for the session
(`/allow-cmd NAME`, carried in `ToolContext.extra_commands`). Every argument
that could name a file is held to the workspace rules (inside, not hidden),
and each built-in program has its own extra rules, e.g. make may not be
pointed at another makefile or folder.
"""

from __future__ import annotations

import re
import shlex
import stat
from collections.abc import Callable
from pathlib import Path

from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.files import describe_kind
from coding_harness.daemon.tools.process import ProcessResult, run_process
from coding_harness.daemon.tools.workspace import Workspace, is_hidden_name

ALLOWED = ("cat", "ls", "make", "pwd", "uv")
_OPERATOR = re.compile(r"[;|&`]|\$\(|\$\{|^\d*[<>]")
_MAKE_SHORT_REFUSED = set("fCEI")
_MAKE_SHORT_WITH_VALUE = set("jlWoO")
_MAKE_LONG_REFUSED = ("file", "makefile", "directory", "eval", "include-dir")
_MAKE_VARS_REFUSED = {
    "SHELL", "MAKEFLAGS", "MFLAGS", "GNUMAKEFLAGS", "MAKEFILES", "MAKESHELL", ".SHELLFLAGS",
}  # fmt: skip
_MAKE_ASSIGNMENT = re.compile(r"^([^=:+?!\s]+)\s*(:::=|::=|:=|\+=|\?=|!=|=)(.*)$", re.DOTALL)
_LS_HIDDEN_SHORT = set("aAf")  # -f implies -a
_LS_HIDDEN_LONG = ("all", "almost-all")
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
_COMMAND_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")


async def run_shell(ctx: ToolContext, command: str) -> str:
    """Run one whitelisted command in the workspace and report its output."""
    argv = parse_command(command, allowed_extras(ctx.extra_commands))
    check_command(ctx, argv)
    result = await run_process(
        argv, ctx.workspace.root, ctx.command_timeout, env=ctx.command_environment()
    )
    output = filter_ls_output(result.output) if argv[0] == "ls" else result.output
    return _report(output, result, ctx.command_timeout)


def allowed_extras(names: frozenset[str]) -> frozenset[str]:
    """The session's extra programs that are bare, visible command names."""
    return frozenset(
        name for name in names if _COMMAND_NAME.fullmatch(name) and not is_hidden_name(name)
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
    return argv


def check_command(ctx: ToolContext, argv: list[str]) -> None:
    """Apply the workspace rules to every argument, then the program's own rules."""
    program, args = argv[0], argv[1:]
    if program not in ALLOWED:  # a program the user allowed for this session
        _check_extra(ctx, program, args)
        return
    if program == "uv" and ctx.dry_run:
        raise ToolRefusal(
            "refused: uv is unavailable in this run because the user asked for a dry run "
            "(--dry-run): they only want to preview the proposed diffs, and uv can write files"
        )
    rules: dict[str, Callable[[Workspace, list[str]], None]] = {
        "make": _check_make,
        "ls": _check_ls,
        "cat": _check_cat,
        "uv": _check_uv,
        "pwd": _check_pwd,
    }
    rules[program](ctx.workspace, args)


def _check_extra(ctx: ToolContext, program: str, args: list[str]) -> None:
    if ctx.dry_run:
        raise ToolRefusal(
            f"refused: '{program}' was allowed for this session, but this is a dry run "
            "(--dry-run), in which only the built-in programs run, since others may write files"
        )
    _check_words(ctx.workspace, args)


def _check_words(workspace: Workspace, words: list[str]) -> None:
    """Options may carry a path (`--opt=PATH`, `-pPATH`); other words may be paths."""
    for word in words:
        if word.startswith("--"):
            value = word.partition("=")[2]
        elif word.startswith("-"):
            value = word[2:] if "/" in word else ""
        else:
            value = word
        if value:
            _check_path(workspace, value)


def _check_path(workspace: Workspace, word: str) -> Path:
    """The word read as a path: it must stay inside and name nothing hidden."""
    return workspace.resolve_visible(word)


def _check_make(workspace: Workspace, args: list[str]) -> None:
    targets: list[str] = []
    for arg in args:
        assignment = _MAKE_ASSIGNMENT.match(arg)
        if arg.startswith("-"):
            _check_make_option(arg)
        elif assignment:
            _check_make_variable(workspace, arg, *assignment.groups())
            continue
        targets.append(arg)
    _check_words(workspace, targets)


def _check_make_option(arg: str) -> None:
    if arg.startswith("--"):
        name = arg[2:].partition("=")[0]
        if name and any(long.startswith(name) for long in _MAKE_LONG_REFUSED):
            raise _make_refusal(arg)
        return
    for letter in arg[1:]:
        if letter in _MAKE_SHORT_REFUSED:
            raise _make_refusal(arg)
        if letter in _MAKE_SHORT_WITH_VALUE:
            return


def _make_refusal(arg: str) -> ToolRefusal:
    return ToolRefusal(
        f"refused: make option '{arg}' is not allowed. make runs only the workspace's own "
        "makefile, in the workspace root (no -f, -C, -I, --eval)"
    )


def _check_make_variable(workspace: Workspace, arg: str, name: str, op: str, value: str) -> None:
    if name.upper() in _MAKE_VARS_REFUSED or op == "!=" or re.search(r"\$[({]|`", value):
        raise ToolRefusal(
            f"refused: '{arg}' is not allowed; make variables on the command line may not "
            "set SHELL or MAKEFLAGS, run commands or expand $(...)"
        )
    if "/" in value or is_hidden_name(value):
        _check_path(workspace, value)


def _check_ls(workspace: Workspace, args: list[str]) -> None:
    for arg in args:
        if _ls_shows_hidden(arg):
            raise ToolRefusal(f"refused: 'ls {arg}' would list hidden files, which are off limits")
    _check_words(workspace, args)


def _ls_shows_hidden(arg: str) -> bool:
    if arg.startswith("--"):
        name = arg[2:].partition("=")[0]
        return bool(name) and any(long.startswith(name) for long in _LS_HIDDEN_LONG)
    return arg.startswith("-") and bool(_LS_HIDDEN_SHORT & set(arg[1:]))


def _check_cat(workspace: Workspace, args: list[str]) -> None:
    for arg in args:
        if arg.startswith("-"):
            continue
        real = _check_path(workspace, arg)
        if real.is_relative_to("/proc") or real.is_relative_to("/dev"):
            raise ToolRefusal(f"refused: cat does not read '{arg}'")
        try:
            mode = real.stat().st_mode
        except OSError:
            continue  # cat itself reports a missing file
        if not stat.S_ISREG(mode):
            raise ToolRefusal(f"refused: '{arg}' is {describe_kind(mode)}; cat reads only files")


def _check_uv(workspace: Workspace, args: list[str]) -> None:
    if "run" in args:
        for arg in args[args.index("run") + 1 :]:
            value = arg.partition("=")[2] if arg.startswith("--") else arg
            if arg == "-" or _URL.match(value):
                raise ToolRefusal(
                    f"refused: 'uv run {arg}' would run code from standard input or the "
                    "network; run a script or module that is in the workspace"
                )
    _check_words(workspace, [arg for arg in args if not _URL.match(arg)])


def _check_pwd(workspace: Workspace, args: list[str]) -> None:
    _check_words(workspace, args)


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
