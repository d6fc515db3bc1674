"""Getting a client to a session: reach the daemon, then create or join one.

Shared by the one-shot command and the REPL so both resolve the workspace,
the provider and model overrides (flags, then CODING_AGENT_PROVIDER and
CODING_AGENT_MODEL) and the API keys the same way. With `--debug` the
session's debug log is switched on (`session.configure {debug}`) and its
path printed once, on standard error.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from coding_harness.protocol import methods, paths
from coding_harness.protocol.client import Connection, DaemonUnreachable

from .args import OneShotOptions
from .launcher import connect_or_start
from .sanitize import one_line
from .style import Style
from .version_skew import warn as warn_version_skew


def key_env(names: list[str]) -> dict[str, str]:
    """The API keys the daemon's profiles name, from this shell's environment."""
    return {name: os.environ[name] for name in names if os.environ.get(name)}


def reach_daemon(style: Style) -> Connection | None:
    """A connection, starting the daemon if needed; None after saying why not."""
    try:
        return connect_or_start(paths.socket_path())
    except DaemonUnreachable as exc:
        style.line(f"harness: cannot reach the daemon: {exc}", "red")
        return None


def _join(
    conn: Connection, options: OneShotOptions, info: dict[str, Any], style: Style
) -> dict[str, Any]:
    """`--session ID`: attach, switching its provider or model first when asked (as
    `/provider` and `/model` would), and its debug log on under `--debug`."""
    sid = options.session
    if options.provider:
        conn.request(methods.PROVIDER_USE, {"session": sid, "name": options.provider})
    if options.model:
        conn.request(methods.MODEL_USE, {"session": sid, "model": options.model})
    summary: dict[str, Any] = conn.request(methods.SESSION_ATTACH, {"session": sid})
    if options.debug:
        switch_debug(conn, str(sid), True, style)
    return {**summary, "key_env": info.get("key_env", [])}


def open_session(
    conn: Connection, options: OneShotOptions, info: dict[str, Any], style: Style
) -> dict[str, Any]:
    """Join `--session`, or create a session for the workspace; print the route line."""
    warn_version_skew(info, style)
    if info.get("notice"):
        style.line(f"harnessd: {info['notice']}", "yellow")
    if options.session:
        return _join(conn, options, info, style)
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
    attached = conn.request(methods.SESSION_ATTACH, {"session": session["session"]})
    session["last_seq"] = attached.get("last_seq", 0)  # where a reconnection replays from
    for problem in session.get("config_problems") or []:
        style.line(f"config: {problem}", "yellow")
    if not options.quiet and options.output_format == "text":
        style.line(f"{session['provider']} · {session['model']} · {session['cwd']}", "dim")
    if options.debug:
        switch_debug(conn, str(session["session"]), True, style)
    return session


def switch_debug(conn: Connection, session: str, on: bool | None, style: Style) -> str | None:
    """Turn the session's debug log on or off (None: leave it), say where it is, and
    return its path (None while off). `--debug` and the REPL's `/debug` use this."""
    params: dict[str, Any] = {"session": session}
    if on is not None:
        params["debug"] = on
    result: dict[str, Any] = conn.request(methods.SESSION_CONFIGURE, params)
    path = result.get("debug_log")
    if path:
        style.line(f"debug: raw model exchanges go to {path}", "dim")
    else:
        style.line("debug: off", "dim")
    return str(path) if path else None


DEBUG_CHOICES: dict[str, bool | None] = {"": None, "on": True, "off": False}


def debug_command(conn: Connection, session: str, argument: str, style: Style) -> None:
    """The REPL's `/debug [on|off]`: switch the session's debug log, or show it."""
    word = argument.strip().lower()
    if word not in DEBUG_CHOICES:
        shown = one_line(argument, 40)
        style.line(f"/debug {shown}: say on or off (usage: /debug [on|off])", "yellow")
        return
    switch_debug(conn, session, DEBUG_CHOICES[word], style)
