"""`harness`: parse the command line and hand off to the right client.

Imports stay lean: the REPL (prompt_toolkit) is imported only when it runs.
Input is checked here, before any daemon is involved: the prompt (from the
command line or standard input) and the workspace folder's name must be
UTF-8 and fit in one message to the daemon, and the folder must exist; each
refusal is one line and exit 5. The config's `quiet`, `plain` and `debug`
are read here too, as defaults under the flags. Whatever else a command lets escape is said
in one line by `failures.run_guarded`.
"""

from __future__ import annotations

import importlib
import os
import sys

from coding_harness.client.args import (
    SUBCOMMANDS,
    OneShotOptions,
    UsageError,
    build_parser,
    parse_oneshot,
    version_text,
)
from coding_harness.client.failures import prepare_streams, run_guarded
from coding_harness.client.session.text_input import BadInput, decode_input, utf8_problem
from coding_harness.protocol import exit_codes

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from _socket import socket

# Room left in a message for everything a submit carries besides the prompt.
MESSAGE_OVERHEAD = 1024 * 1024


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    prepare_streams()
    return run_guarded(lambda: _main(args), debug="--debug" in args)


def _main(args: list[str]) -> int:
    if args and args[0] in SUBCOMMANDS:
        return _subcommand(args[0], args[1:])
    if args and args[0] in ("-h", "--help"):
        build_parser().print_help()
        return exit_codes.OK
    early = None
    try:
        options = parse_oneshot(args)
        if options.version:
            print(version_text())
            return exit_codes.OK
        if options.continued or options.resume is not None:
            from coding_harness.client.commands.sessions_resume import resume_session

            stop = resume_session(options)
            if stop is not None:
                return stop
        early = _dial_early(options)
        prompt = _prompt(options)
        _check_workspace(options)
        _config_defaults(options)
    except BadInput as exc:
        _hang_up(early)
        print(f"harness: {exc}", file=sys.stderr)
        return exit_codes.BAD_ARGUMENTS
    except UsageError as exc:
        print(f"harness: {exc}\nTry 'harness --help'.", file=sys.stderr)
        return exit_codes.BAD_ARGUMENTS
    if not prompt and options.bg:
        _hang_up(early)
        print("harness: --bg needs a task: harness -p TASK --bg", file=sys.stderr)
        return exit_codes.BAD_ARGUMENTS
    if not prompt:  # the REPL: no task at all
        _hang_up(early)
        from coding_harness.client.repl.repl import run_repl

        return run_repl(options)
    from coding_harness.client.commands.oneshot import run

    return run(options, prompt, early)


def _dial_early(options: OneShotOptions) -> socket | None:
    """For a task given on the command line: the daemon's socket, dialled before the
    rest of the client loads, so the daemon, woken from idle, accepts it meanwhile
    (None when nothing answers; the one-shot then reaches or starts one). Not when
    the task is read from standard input, which may take longer than the daemon
    waits for a connection's `initialize`."""
    if options.stdin or not (options.prompts or options.words):
        return None
    from coding_harness.protocol.dial import DaemonUnreachable, dial
    from coding_harness.protocol.paths import socket_path

    try:
        return dial(socket_path())
    except DaemonUnreachable:
        return None


def _hang_up(early: socket | None) -> None:
    if early is not None:
        early.close()


def _prompt(options: OneShotOptions) -> str:
    """The task: -p texts, then the words, then standard input; BadInput if unusable."""
    parts = [*options.prompts]
    if options.words:
        parts.append(" ".join(options.words))
    if options.stdin or (not parts and not sys.stdin.isatty()):
        options.stdin = True
        text = decode_input(sys.stdin.buffer.read(), "standard input")
        parts.append(text.replace("\r\n", "\n").replace("\r", "\n"))  # as text mode reads
    prompt = "\n".join(parts).strip()
    if not prompt and options.stdin:
        raise BadInput("the prompt is empty")
    if not prompt and parts:  # `-p ""`: a task was meant, never the REPL
        raise BadInput("the prompt is empty; give the task, or run `harness` alone for the REPL")
    _check_size(prompt)
    return prompt


def _check_size(prompt: str) -> None:
    from coding_harness.protocol.framing import MAX_MESSAGE_BYTES

    limit = MAX_MESSAGE_BYTES - MESSAGE_OVERHEAD
    size = len(prompt.encode("utf-8"))
    if size > limit:
        raise BadInput(
            f"the prompt is {size / 1048576:.1f} MiB, over the {limit // 1048576} MiB "
            "one message to the daemon can carry; send a smaller part of it"
        )


def _config_defaults(options: OneShotOptions) -> None:
    """The config's `quiet`, `plain` and `debug` under the flags (`config_defaults.py`)."""
    from pathlib import Path

    from coding_harness.client.session.config_defaults import apply_defaults
    from coding_harness.protocol.paths import home_dir

    try:
        cwd = Path(options.cwd or Path.cwd())
    except FileNotFoundError:  # with --session the folder may be gone: no project file
        cwd = home_dir()
    apply_defaults(options, home_dir(), cwd)


def _check_workspace(options: OneShotOptions) -> None:
    """The folder a new session would work in exists (when it is the current one) and is UTF-8."""
    if options.session:
        return  # the session has its folder already
    try:
        folder = options.cwd or os.getcwd()  # noqa: PTH109 - a str, for utf8_problem
    except FileNotFoundError:
        raise BadInput(
            "the current folder no longer exists; cd to an existing one, or pass --cwd DIR"
        ) from None
    problem = utf8_problem(folder)
    if problem:
        shown = os.fsencode(folder).decode("utf-8", "backslashreplace")
        raise BadInput(
            f"the folder name {shown} is not valid UTF-8 ({problem}), and the daemon takes "
            "UTF-8 only; rename the folder, or work from another with --cwd"
        )


# Each subcommand's module (imported only when used) exposes main(argv) -> int.
_SUBCOMMAND_MODULES = {
    "daemon": "service.daemon_control",
    "sessions": "commands.sessions_list",
    "attach": "repl.attach",
    "approve": "commands.approve",
    "trust": "commands.trust",
    "doctor": "commands.doctor",
    "completions": "commands.completions",
    "acp": "acp.main",
    "undo": "commands.undo",
    "mcp": "commands.mcp",
    "web": "web.main",
    "worktree": "commands.worktree",
    "logs": "commands.logs",
    "wait": "commands.wait",
    "queue": "commands.queue",
}


def _subcommand(name: str, rest: list[str]) -> int:
    module = importlib.import_module(f"{__package__}.{_SUBCOMMAND_MODULES[name]}")
    code: int = module.main(rest)
    return code
