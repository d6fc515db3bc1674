"""`harness`: parse the command line and hand off to the right client.

Imports stay lean: the REPL (prompt_toolkit) is imported only when it runs.
"""

from __future__ import annotations

import importlib
import sys

from . import exit_codes
from .args import SUBCOMMANDS, UsageError, build_parser, parse_oneshot, version_text


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in SUBCOMMANDS:
        return _subcommand(args[0], args[1:])
    if args and args[0] in ("-h", "--help"):
        build_parser().print_help()
        return exit_codes.OK
    try:
        options = parse_oneshot(args)
    except UsageError as exc:
        print(f"harness: {exc}\nTry 'harness --help'.", file=sys.stderr)
        return exit_codes.BAD_ARGUMENTS
    if options.version:
        print(version_text())
        return exit_codes.OK
    parts = [*options.prompts]
    if options.words:
        parts.append(" ".join(options.words))
    if options.stdin or (not parts and not sys.stdin.isatty()):
        options.stdin = True
        parts.append(sys.stdin.read())
    prompt = "\n".join(parts).strip()
    if not prompt:
        if options.stdin:
            print("harness: the prompt is empty", file=sys.stderr)
            return exit_codes.BAD_ARGUMENTS
        from .repl import run_repl

        return run_repl(options)
    from .oneshot import run

    return run(options, prompt)


# Each subcommand's module (imported only when used) exposes main(argv) -> int.
_SUBCOMMAND_MODULES = {
    "daemon": "daemon_control",
    "sessions": "sessions_list",
    "attach": "attach",
    "approve": "approve",
    "trust": "trust",
    "doctor": "doctor",
    "completions": "completions",
}


def _subcommand(name: str, rest: list[str]) -> int:
    module = importlib.import_module(f"{__package__}.{_SUBCOMMAND_MODULES[name]}")
    code: int = module.main(rest)
    return code
