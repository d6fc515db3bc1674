"""The one-shot command line: flags, the prompt, and bad arguments (exit 5).

`harness --help` is the manual: the flags (argparse lists them), then every
subcommand, the REPL's keys, output, exit codes, environment and files.

argparse costs about 5 ms to import and run for the first time, a tenth of a
one-shot run, so a plain command line (exact flag names, one run of prompt
words) is read by `_fast_parse`; anything else (abbreviations, `--help`,
mistakes) goes to argparse, which gives the same result or the error.
"""

from __future__ import annotations

from coding_harness.client.commands import worktree_option
from coding_harness.client.option_table import OPTIONS, OUTPUT_FORMATS
from coding_harness.client.session.text_input import check_texts
from coding_harness.protocol.modes import PERMISSION_MODES, READ_ONLY
from coding_harness.protocol.version import __version__

SUBCOMMANDS = (
    "sessions",
    "attach",
    "approve",
    "trust",
    "doctor",
    "completions",
    "daemon",
    "acp",
    "undo",
    "mcp",
    "logs",
    "wait",
    "web",
    "worktree",
    "queue",
)
DAEMON_ACTIONS = ("start", "stop", "restart", "status", "logs", "install", "uninstall")
SHELLS = ("bash", "zsh", "fish")

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any, NoReturn


class UsageError(Exception):
    pass


class OneShotOptions:
    """The parsed flags (a plain class: `dataclasses` is slow to import)."""

    def __init__(self, **values: object) -> None:
        self.prompts: list[str] = []
        self.words: list[str] = []
        self.stdin = False
        self.yes = False
        self.dry_run = False
        self.mode: str | None = None
        self.provider: str | None = None
        self.model: str | None = None
        self.cwd: str | None = None
        self.session: str | None = None
        self.continued = False
        self.resume: str | None = None
        self.quiet = False
        self.verbose = False
        self.plain = False
        self.debug = False
        self.output_format = "text"
        self.version = False
        self.bg = False
        self.worktree: str | None = None  # "" for a generated name
        self.queue = False  # put the task in the hub's queue (docs/team.md)
        self.repo: str | None = None
        self.ref: str | None = None
        for key, value in values.items():
            if not hasattr(self, key):
                raise TypeError(f"unknown option {key!r}")
            setattr(self, key, value)


def _dest(names: tuple[str, ...], settings: dict[str, Any]) -> str:
    """The attribute argparse stores an option in."""
    return str(settings.get("dest") or names[-1].lstrip("-").replace("-", "_"))


# What `_fast_parse` reads: switches, and options that take a value.
_SWITCHES = {
    name: _dest(names, settings)
    for names, settings in OPTIONS
    if settings.get("action") == "store_true"
    for name in names
}
_VALUED = {
    name: _dest(names, settings)
    for names, settings in OPTIONS
    if settings.get("action") in (None, "append")
    for name in names
}


def build_parser() -> argparse.ArgumentParser:
    import argparse

    from coding_harness.client import help_text

    class _Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            raise UsageError(message)

    parser = _Parser(
        prog="harness",
        usage="harness [options] [PROMPT ...]\n       harness SUBCOMMAND ...",
        description=help_text.DESCRIPTION,
        epilog=help_text.EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "words", nargs="*", metavar="PROMPT", help="the task (words joined by spaces)"
    )
    for names, settings in OPTIONS:
        parser.add_argument(*names, **settings)
    return parser


def parse_oneshot(argv: list[str]) -> OneShotOptions:
    options = _fast_parse(argv)
    if options is None:
        options = OneShotOptions(**vars(build_parser().parse_args(argv)))
    if options.yes and options.dry_run:
        raise UsageError("--yes and --dry-run contradict each other; pass one")
    if options.yes and options.mode == READ_ONLY:
        raise UsageError("--yes and --mode read-only contradict each other; pass one")
    if options.worktree is not None and (problem := worktree_option.problem(vars(options))):
        raise UsageError(problem)
    _check_queue(options)
    check_texts(options)
    return options


# What a queued task cannot take: it runs on a runner, in a session of its own.
_NOT_QUEUED = (
    ("session", "--session"),
    ("continued", "--continue"),
    ("resume", "--resume"),
    ("worktree", "--worktree"),
    ("bg", "--bg"),
    ("dry_run", "--dry-run"),
    ("yes", "--yes"),
    ("mode", "--mode"),
)


def _check_queue(options: OneShotOptions) -> None:
    if not options.queue:
        if options.repo is not None or options.ref is not None:
            raise UsageError("--repo and --ref go with --queue: harness -p TASK --queue --repo URL")
        return
    for key, flag in _NOT_QUEUED:
        if getattr(options, key) not in (None, False):
            raise UsageError(
                f"--queue and {flag} do not go together: a queued task runs on a runner of the"
                " hub, in a new session under that runner's own settings"
            )


def _fast_parse(argv: list[str]) -> OneShotOptions | None:
    """What argparse would make of a plain command line; None to let argparse decide."""
    options = OneShotOptions()
    words_seen = words_ended = False
    rest = iter(argv)
    for arg in rest:
        if not arg.startswith("-"):
            if words_ended:
                return None  # a second run of words: argparse refuses it
            words_seen = True
            options.words.append(arg)
            continue
        words_ended = words_seen
        name, equals, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name in _SWITCHES and not equals:
            setattr(options, _SWITCHES[name], True)
            continue
        if name not in _VALUED:
            return None
        if not equals:
            value = next(rest, "-")
            if value.startswith("-"):
                return None
        if not _store(options, _VALUED[name], value):
            return None
    return options


# The options whose value is one of a few words (argparse's `choices`).
_CHOICES = {"output_format": OUTPUT_FORMATS, "mode": PERMISSION_MODES}


def _store(options: OneShotOptions, key: str, value: str) -> bool:
    if key == "prompts":
        options.prompts.append(value)
    elif key in _CHOICES and value not in _CHOICES[key]:
        return False
    else:
        setattr(options, key, value)
    return True


def version_text() -> str:
    return f"harness {__version__}"
