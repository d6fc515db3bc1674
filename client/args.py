"""The one-shot command line: flags, the prompt, and bad arguments (exit 5)."""

from __future__ import annotations

import argparse
from typing import NoReturn

from coding_harness.protocol.version import __version__

SUBCOMMANDS = ("sessions", "attach", "approve", "trust", "doctor", "completions", "daemon")

EPILOG = """\
subcommands:
  harness sessions                 list sessions
  harness attach [ID]              a REPL on an existing session
  harness approve [ID]             only answer approval requests
  harness trust                    trust this project's .local_coding_harness.json
  harness daemon start|stop|restart|status|install|uninstall
  harness daemon logs [-n N] [-f]
  harness doctor                   check the set-up; each problem with its fix

exit codes:
  0 done   1 model or network error   2 make check failed after an edit
  3 an edit was rejected or skipped   4 daemon unreachable   5 bad arguments
  130 interrupted

A prompt that starts with a subcommand's name goes through -p.
NO_COLOR is honoured. Config: ~/.coding_harness.json and ./.local_coding_harness.json.
"""


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


class OneShotOptions:
    """The parsed flags (a plain class: `dataclasses` is slow to import)."""

    def __init__(self, **values: object) -> None:
        self.prompts: list[str] = []
        self.words: list[str] = []
        self.stdin = False
        self.yes = False
        self.dry_run = False
        self.provider: str | None = None
        self.model: str | None = None
        self.cwd: str | None = None
        self.session: str | None = None
        self.quiet = False
        self.plain = False
        self.debug = False
        self.output_format = "text"
        self.version = False
        for key, value in values.items():
            if not hasattr(self, key):
                raise TypeError(f"unknown option {key!r}")
            setattr(self, key, value)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="harness",
        usage="harness [options] [PROMPT ...]\n       harness SUBCOMMAND ...",
        description="A coding agent in a background daemon. With a prompt: one task, then exit. "
        "Without one: the REPL.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    add("words", nargs="*", metavar="PROMPT", help="the task (joined with spaces)")
    add(
        "-p",
        "--prompt",
        dest="prompts",
        action="append",
        default=[],
        metavar="TEXT",
        help="prompt text; repeatable, joined with newlines",
    )
    add("--stdin", action="store_true", help="read the prompt from standard input")
    add(
        "-y",
        "--yes",
        action="store_true",
        help="apply proposed edits without asking (diff still shown)",
    )
    add("--dry-run", action="store_true", help="show diffs, write nothing")
    add("--provider", metavar="NAME", help="provider profile from the config")
    add("--model", metavar="ID", help="model id for this session")
    add("--cwd", metavar="DIR", help="workspace folder (default: the current one)")
    add("--session", metavar="ID", help="submit into an existing session")
    add("-q", "--quiet", action="store_true", help="only the answer and questions for you")
    add("--plain", "--no-color", dest="plain", action="store_true", help="no colors")
    add("--debug", action="store_true", help="show protocol details on errors")
    add("--output-format", choices=("text", "json", "stream-json"), default="text")
    add("-v", "--version", action="store_true", help="print the version and exit")
    return parser


def parse_oneshot(argv: list[str]) -> OneShotOptions:
    namespace = build_parser().parse_args(argv)
    options = OneShotOptions()
    for key, value in vars(namespace).items():
        setattr(options, key, value)
    if options.yes and options.dry_run:
        raise UsageError("--yes and --dry-run contradict each other; pass one")
    return options


def version_text() -> str:
    return f"harness {__version__}"
