"""`harness -p ...`: one task in a session, then exit with its code.

Under `--output-format json` or `stream-json` the run always ends with one
result object on standard output, also when it could not start (daemon
unreachable: exit 4; refused arguments: 5; Ctrl-C: 130). A connection that
drops mid-turn (the client was stopped and fell behind, the daemon
restarted) is opened again and the missed events replayed (`TurnDriver`).
The session is created or joined by `initialize` itself (`SessionRequest`), and
a new session's turn starts in that same request: one round trip, sent before
the modules that print the turn are imported, so they load while the daemon
works on it. `--mode NAME` is the new session's permission mode (a session
joined with `--session` is switched with `session.configure` before the submit).
`--bg` submits the task (`options.background`) and returns at once, printing the
session's short id on standard output and how to follow it on standard error
(`background.py`); the turn runs on in the daemon.
"""

from __future__ import annotations

import sys

from coding_harness.client.failures import rpc_exit_code
from coding_harness.client.session.setup import (
    SessionRequest,
    key_env,
    reach_daemon,
    running_daemon,
)
from coding_harness.protocol import errors, exit_codes, methods, paths
from coding_harness.protocol.client import Connection, DaemonUnreachable
from coding_harness.protocol.version import __version__

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from _socket import socket
    from typing import Any

    from coding_harness.client.args import OneShotOptions
    from coding_harness.client.render.style import Style


CLIENT = ("harness", __version__)


def run(options: OneShotOptions, prompt: str, early: socket | None = None) -> int:
    """`early`: the daemon's socket, when `cli` dialled it already."""
    if options.queue:  # for a runner of the hub (docs/team.md)
        from coding_harness.client.commands.queue import submit

        return submit(options, prompt, early)
    conn = Connection(early, paths.socket_path()) if early is not None else running_daemon()
    # The session request goes out first; what prints loads while the daemon works.
    first_turn = {"text": prompt, "options": _turn_options(options)}
    request = SessionRequest(conn, options, CLIENT, first_turn) if conn is not None else None
    from coding_harness.client.render.style import Style, color_wanted

    style = Style(sys.stderr, color=color_wanted(sys.stderr, options.plain))
    _import_output()
    if conn is None:
        conn = reach_daemon(style)  # starts one
        if conn is None:
            return _failed(options, exit_codes.DAEMON_UNREACHABLE)
    try:
        with conn:
            request = request or SessionRequest(conn, options, CLIENT, first_turn)
            return _run(conn, request.finish(style), options, prompt, style)
    except DaemonUnreachable as exc:
        style.line(f"harness: {exc}", "red")
        return _failed(options, exit_codes.DAEMON_UNREACHABLE)
    except errors.RpcError as exc:
        style.line(f"harness: {exc.message}", "red")
        return _failed(options, rpc_exit_code(exc))
    except KeyboardInterrupt:
        return _failed(options, exit_codes.INTERRUPTED)


def _failed(options: OneShotOptions, code: int, session: str | None = None) -> int:
    """Exit with `code`; the JSON formats still print their one result object."""
    if options.output_format in ("json", "stream-json"):
        import json  # only the JSON formats, and only when the run could not start

        from coding_harness.client.render.result_json import result_object

        result = result_object({"exit_code": code, "session": session})
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()
    return code


def _import_output() -> None:
    """Load what prints the turn (done while the daemon opens the session)."""
    from coding_harness.client.session import turn_driver  # noqa: F401


def _run(
    conn: Connection, session: dict[str, Any], options: OneShotOptions, prompt: str, style: Style
) -> int:
    if options.bg:
        from coding_harness.client.commands import background

        turn = session.get("turn") or _submit(conn, session, options, prompt)
        return background.submitted(session, turn, options.output_format)
    from coding_harness.client.render.printer import PrintOptions, TurnPrinter
    from coding_harness.client.render.views import oneshot_view
    from coding_harness.client.session.turn_driver import TurnDriver

    view = oneshot_view(options, style, sys.stdout)
    printer = TurnPrinter(
        view,
        PrintOptions(
            quiet=options.quiet, output_format=options.output_format, verbose=options.verbose
        ),
        sys.stdout,
    )
    driver = TurnDriver(
        conn,
        session["session"],
        printer,
        lambda _request: None,
        reopen=lambda: _reopen(conn),
        last_seq=int(session.get("last_seq") or 0),
    )
    # Its answers are read beside the daemon's events: one given elsewhere ends the question.
    driver.answer = _answerer(options, style, driver.read_answer_line)
    try:
        submitted = session.get("turn") or _submit(conn, session, options, prompt)
        finished = driver.follow(submitted["turn"])
    finally:
        view.pause()
        if driver.conn is not conn:
            driver.conn.close()
    code = int(finished.get("exit_code", exit_codes.MODEL_ERROR))
    printer.final({**finished, "session": session["session"], "exit_code": code})
    return code


def _reopen(first: Connection) -> Connection:
    """Another connection to the daemon `first` reached, introduced the same way; the
    daemon is started again when it is gone (it crashed, or stopped)."""
    from coding_harness.client.session.launcher import redial

    return redial(first.path, lambda conn: conn.initialize(*CLIENT))


def _submit(
    conn: Connection, session: dict[str, Any], options: OneShotOptions, prompt: str
) -> dict[str, Any]:
    """`session.submit`, for a turn that did not start with the session (a joined one,
    or keys the daemon names that were not sent yet); a joined session is switched to
    `--mode` first."""
    in_force = session.get("mode") or (session.get("options") or {}).get("mode")
    if options.mode and options.mode != in_force:  # a session joined with --session
        conn.request(
            methods.SESSION_CONFIGURE, {"session": session["session"], "mode": options.mode}
        )
    params = {
        "session": session["session"],
        "text": prompt,
        "options": _turn_options(options),
        "env": key_env(session.get("key_env") or []),
    }
    submitted: dict[str, Any] = conn.request(methods.SESSION_SUBMIT, params)
    return submitted


def _turn_options(options: OneShotOptions) -> dict[str, Any]:
    turn = {"yes": options.yes, "dry_run": options.dry_run}
    if options.bg:
        turn["background"] = True
    return turn


def _answerer(options: OneShotOptions, style: Style, read_line: Any) -> Any:
    exhausted = options.stdin

    def answer(request: dict[str, Any]) -> tuple[str, str] | None:
        nonlocal exhausted
        if exhausted:
            return None
        from coding_harness.client.session import approval_prompt

        result = approval_prompt.ask(style, kind=request, read_line=read_line)
        exhausted = result is None
        return result

    return answer
