"""`harness -p ...`: one task in a session, then exit with its code."""

from __future__ import annotations

import sys
from typing import Any

from coding_harness.protocol import errors, methods
from coding_harness.protocol.client import Connection, DaemonUnreachable
from coding_harness.protocol.version import __version__

from . import approval_prompt, exit_codes
from .args import OneShotOptions
from .printer import PrintOptions, TurnPrinter
from .session_setup import key_env, open_session, reach_daemon
from .style import Style, color_wanted
from .turn_driver import TurnDriver


def run(options: OneShotOptions, prompt: str) -> int:
    style = Style(sys.stderr, color=color_wanted(sys.stderr, options.plain))
    conn = reach_daemon(style)
    if conn is None:
        return exit_codes.DAEMON_UNREACHABLE
    try:
        with conn:
            return _run(conn, options, prompt, style)
    except DaemonUnreachable as exc:
        style.line(f"harness: {exc}", "red")
        return exit_codes.DAEMON_UNREACHABLE
    except errors.RpcError as exc:
        style.line(f"harness: {exc.message}", "red")
        return (
            exit_codes.BAD_ARGUMENTS
            if isinstance(exc, errors.InvalidParams)
            else exit_codes.MODEL_ERROR
        )
    except KeyboardInterrupt:
        return exit_codes.INTERRUPTED


def _run(conn: Connection, options: OneShotOptions, prompt: str, style: Style) -> int:
    info = conn.initialize("harness", __version__)
    session = open_session(conn, options, info, style)
    env = key_env(session.get("key_env") or [])
    printer = TurnPrinter(
        style,
        PrintOptions(
            quiet=options.quiet,
            stream_reply=sys.stdout.isatty() and not options.plain,
            output_format=options.output_format,
        ),
    )
    driver = TurnDriver(conn, session["session"], printer, _answerer(options, style))
    submitted = conn.request(
        methods.SESSION_SUBMIT,
        {
            "session": session["session"],
            "text": prompt,
            "options": {
                "yes": options.yes,
                "dry_run": options.dry_run,
                # From a pipe only one answer can come: no second question (a revert).
                "interactive": sys.stdin.isatty() and not options.stdin,
            },
            "env": env,
        },
    )
    finished = driver.follow(submitted["turn"])
    code = int(finished.get("exit_code", exit_codes.MODEL_ERROR))
    printer.final({**finished, "session": session["session"], "exit_code": code})
    return code


def _answerer(options: OneShotOptions, style: Style) -> Any:
    exhausted = options.stdin

    def answer(request: dict[str, Any]) -> tuple[str, str] | None:
        nonlocal exhausted
        if exhausted:
            return None
        result = approval_prompt.ask(style)
        exhausted = result is None
        return result

    return answer
