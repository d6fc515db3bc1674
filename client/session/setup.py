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

from coding_harness.protocol import errors, methods, paths
from coding_harness.protocol.client import Connection, DaemonUnreachable, connect
from coding_harness.protocol.version import __version__

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from coding_harness.client.args import OneShotOptions
    from coding_harness.client.render.style import Style


def key_env(names: list[str]) -> dict[str, str]:
    """The API keys the daemon's profiles name, from this shell's environment."""
    return {name: os.environ[name] for name in names if os.environ.get(name)}


def running_daemon() -> Connection | None:
    """A connection to the daemon if one answers now, else None (nothing printed)."""
    try:
        return connect(paths.socket_path())
    except DaemonUnreachable:
        return None


def reach_daemon(style: Style) -> Connection | None:
    """A connection, starting the daemon if needed; None after saying why not."""
    running = running_daemon()
    if running is not None:
        return running  # the launcher (and subprocess) is not even imported
    from coding_harness.client.session.launcher import connect_or_start

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
    """Join `--session`, or create a session for the workspace; print the route line.
    For a connection already initialized (`info`); `SessionRequest` does both at once."""
    _announce(info, style)
    if options.session:
        return _join(conn, options, info, style)
    session: dict[str, Any] = conn.request(
        methods.SESSION_CREATE, _create_params(options, info.get("key_env") or [])
    )
    attached = conn.request(methods.SESSION_ATTACH, {"session": session["session"]})
    session["last_seq"] = attached.get("last_seq", 0)  # where a reconnection replays from
    _created(conn, options, session, style)
    return session


class SessionRequest:
    """`initialize` with the session to create or join in the same request: one round
    trip where `open_session` takes three. It goes out when made, and `finish` reads
    the answer, so the client can load the rest of itself while the daemon works.
    Joining with --provider or --model (a switch before the attach), and a daemon that
    refuses the combined form's params (an older one, or a bad cwd or provider, which
    the separate requests then report as before) or answers without a session (one
    that ignores params it does not know), take the separate requests. Making
    one never raises: a failure to send is raised by `finish`."""

    def __init__(
        self,
        conn: Connection,
        options: OneShotOptions,
        client: tuple[str, str],
        submit: dict[str, Any] | None = None,
    ) -> None:
        """`submit` (`{text, options}`): start the new session's first turn in the same
        request; the answer's `turn` says whether it started (`finish`)."""
        self.conn, self.options, self.client = conn, options, client
        self._sent: int | None = None
        self._failed: Exception | None = None
        if options.session and (options.provider or options.model):
            return
        spec: dict[str, Any] = (
            {"id": options.session} if options.session else _create_params(options)
        )
        if submit is not None and not options.session and not options.debug:
            # With --debug the log is switched on first, so the turn's first call is in it.
            spec["submit"] = {**submit, "env_names": _own_keys(options)}
        try:
            self._sent = conn.send_initialize(*client, notices=True, session=spec)
        except (DaemonUnreachable, errors.RpcError) as exc:
            self._failed = exc

    def finish(self, style: Style) -> dict[str, Any]:
        """The session (as session.create or session.attach gives it), attached; with
        `turn` when the first turn started with it (`session.submit`'s result)."""
        conn, options = self.conn, self.options
        if self._failed is not None:
            raise self._failed
        try:
            info = conn.initialized(self._sent) if self._sent is not None else None
        except errors.InvalidParams:
            info = None
        if info is None:
            return open_session(conn, options, conn.initialize(*self.client, notices=True), style)
        if "session" not in info:  # a daemon that knows no `session` here ignored it
            return open_session(conn, options, info, style)
        _announce(info, style)
        session: dict[str, Any] = info["session"]
        if options.session:
            session["key_env"] = info.get("key_env") or []
            if options.debug:
                switch_debug(conn, str(options.session), True, style)
        else:
            _created(conn, options, session, style)
        return session


def _announce(info: dict[str, Any], style: Style) -> None:
    """What `initialize` has to say: a version skew, the daemon's one-time notice."""
    daemon = info.get("daemon")
    if not isinstance(daemon, dict) or daemon.get("version") != __version__:
        from coding_harness.client.session.version_skew import warn as warn_version_skew

        warn_version_skew(info, style)
    if info.get("notice"):
        style.line(f"harnessd: {info['notice']}", "yellow")


def _create_params(options: OneShotOptions, names: list[str] | None = None) -> dict[str, Any]:
    """session.create's params: the workspace, the overrides, and the keys `names` name
    (by default those the user's own config files name, and the search keys)."""
    if names is None:
        names = _own_keys(options)
    cwd = Path(options.cwd or Path.cwd()).expanduser().resolve()
    params: dict[str, Any] = {
        "cwd": str(cwd),
        "provider": options.provider or os.environ.get("CODING_AGENT_PROVIDER") or None,
        "model": options.model or os.environ.get("CODING_AGENT_MODEL") or None,
        "env": key_env(names),
    }
    if options.mode:  # the permission mode, set as the session is made
        params["options"] = {"mode": options.mode}
    if options.worktree is not None:  # a git worktree of its own: --worktree [NAME]
        params["worktree"] = options.worktree or True
    return params


def _own_keys(options: OneShotOptions) -> list[str]:
    """The key variables this user's own config files name, and the search keys."""
    from coding_harness.client.session.config_defaults import key_names

    return key_names(paths.home_dir(), Path(options.cwd or Path.cwd()))


def _created(
    conn: Connection, options: OneShotOptions, session: dict[str, Any], style: Style
) -> None:
    """After a create: config problems, the route line, `--debug`."""
    for problem in session.get("config_problems") or []:
        style.line(f"config: {problem}", "yellow")
    if not options.quiet and options.output_format == "text":
        style.line(f"{session['provider']} · {session['model']} · {session['cwd']}", "dim")
    if session.get("worktree"):
        from coding_harness.client.commands.worktree_lines import print_created

        print_created(session, style, quiet=options.quiet or options.output_format != "text")
    if options.debug:
        switch_debug(conn, str(session["session"]), True, style)


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
        from coding_harness.client.render.sanitize import one_line

        shown = one_line(argument, 40)
        style.line(f"/debug {shown}: say on or off (usage: /debug [on|off])", "yellow")
        return
    switch_debug(conn, session, DEBUG_CHOICES[word], style)
