"""`harness -p ...`: one task in a session, then exit with its code."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from coding_harness.protocol import errors, methods, paths
from coding_harness.protocol.client import Connection, DaemonUnreachable
from coding_harness.protocol.version import __version__

from . import approval_prompt, exit_codes
from .args import OneShotOptions
from .launcher import connect_or_start
from .printer import PrintOptions, TurnPrinter
from .style import Style, color_wanted
from .turn_driver import TurnDriver


def key_env(names: list[str]) -> dict[str, str]:
    """The API keys the daemon's profiles name, from this shell's environment."""
    return {name: os.environ[name] for name in names if os.environ.get(name)}


def run(options: OneShotOptions, prompt: str) -> int:
    style = Style(sys.stderr, color=color_wanted(sys.stderr, options.plain))
    try:
        conn = connect_or_start(paths.socket_path())
    except DaemonUnreachable as exc:
        style.line(f"harness: cannot reach the daemon: {exc}", "red")
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
    session = _open_session(conn, options, info, style)
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
    conn.request(methods.SESSION_ATTACH, {"session": session["session"]})
    submitted = conn.request(
        methods.SESSION_SUBMIT,
        {
            "session": session["session"],
            "text": prompt,
            "options": {"yes": options.yes, "dry_run": options.dry_run},
            "env": env,
        },
    )
    finished = driver.follow(submitted["turn"])
    code = int(finished.get("exit_code", exit_codes.MODEL_ERROR))
    printer.final({**finished, "session": session["session"], "exit_code": code})
    return code


def _open_session(
    conn: Connection, options: OneShotOptions, info: dict[str, Any], style: Style
) -> dict[str, Any]:
    if options.session:
        summary: dict[str, Any] = conn.request(methods.SESSION_ATTACH, {"session": options.session})
        return {**summary, "key_env": info.get("key_env", [])}
    cwd = Path(options.cwd or Path.cwd()).expanduser().resolve()
    session: dict[str, Any] = conn.request(
        methods.SESSION_CREATE,
        {
            "cwd": str(cwd),
            "provider": options.provider or os.environ.get("CODING_AGENT_PROVIDER") or None,
            "model": options.model or os.environ.get("CODING_AGENT_MODEL") or None,
            "env": key_env(info.get("key_env") or []),
        },
    )
    for problem in session.get("config_problems") or []:
        style.line(f"config: {problem}", "yellow")
    if not options.quiet and options.output_format == "text":
        style.line(f"{session['provider']} · {session['model']} · {session['cwd']}", "dim")
    return session


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
