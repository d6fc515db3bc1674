"""`harness logs ID [-f]`: a session's last turn, printed as the one-shot prints it.

The turn's events are replayed from its `turn.started` (`session.attach` with
`since_seq`) through the one-shot's own printer and view (`render/printer.py`):
tool lines, diffs and notices on standard error, the reply on standard output
(`--output-format json` or `stream-json` as the one-shot has them). Without
`-f` it prints what has happened and stops; a turn still running says so.
With `-f` it follows the turn to its end and exits with the turn's exit code;
an approval it meets is left to another client (`harness approve ID`, `harness
attach ID`), and Ctrl-C leaves without touching the turn (exit 130). A session
without a turn yet prints one line.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from coding_harness.client.args import OneShotOptions
from coding_harness.client.commands.background import session_row, short_id
from coding_harness.client.commands.session_call import with_daemon
from coding_harness.client.option_table import OUTPUT_FORMATS
from coding_harness.client.render.printer import PrintOptions, TurnPrinter
from coding_harness.client.render.style import Style, color_wanted
from coding_harness.client.render.views import oneshot_view
from coding_harness.protocol import exit_codes, methods
from coding_harness.protocol.client import Connection
from coding_harness.protocol.events import parse_event
from coding_harness.protocol.methods import EventKind

# Seconds a replay may take (the daemon paces a long one).
REPLAY_TIMEOUT = 300.0


def parser() -> argparse.ArgumentParser:
    cmd = argparse.ArgumentParser(
        prog="harness logs", description="A session's last turn, as the one-shot prints it."
    )
    cmd.add_argument("session", metavar="ID", help="session id, short id or unique prefix")
    cmd.add_argument("-f", "--follow", action="store_true", help="follow the turn to its end")
    cmd.add_argument("-q", "--quiet", action="store_true", help="only the reply and notices")
    cmd.add_argument("--verbose", action="store_true", help="each command's output whole")
    cmd.add_argument("--plain", "--no-color", dest="plain", action="store_true")
    cmd.add_argument("--output-format", choices=OUTPUT_FORMATS, default="text")
    return cmd


def main(argv: list[str]) -> int:
    try:
        args = parser().parse_args(argv)
    except SystemExit as exc:
        return exit_codes.OK if exc.code == 0 else exit_codes.BAD_ARGUMENTS
    style = Style(sys.stderr, color=color_wanted(sys.stderr, args.plain))
    return with_daemon("harness-logs", style, lambda conn: _show(conn, args, style))


def _show(conn: Connection, args: argparse.Namespace, style: Style) -> int:
    row = session_row(conn, args.session)
    sid, start = str(row["session"]), row.get("last_turn_seq")
    if not isinstance(start, int):
        style.line(f"session {short_id(sid)} has run no turn yet", "dim")
        return exit_codes.OK
    options = OneShotOptions(
        quiet=args.quiet, plain=args.plain, output_format=args.output_format, verbose=args.verbose
    )
    view = oneshot_view(options, style, sys.stdout)
    printer = TurnPrinter(
        view,
        PrintOptions(quiet=args.quiet, output_format=args.output_format, verbose=args.verbose),
        sys.stdout,
    )
    params = {"session": sid, "since_seq": start - 1}
    conn.request(methods.SESSION_ATTACH, params, timeout=REPLAY_TIMEOUT)
    try:
        finished = _print_turn(conn, sid, printer, follow=args.follow)
    finally:
        view.pause()
    if finished is None:
        style.line(f"the turn is still running: harness logs {short_id(sid)} -f follows it", "dim")
        return exit_codes.OK
    code = int(finished.get("exit_code", exit_codes.MODEL_ERROR))
    printer.final({**finished, "session": sid, "exit_code": code})
    return code if args.follow else exit_codes.OK


def _print_turn(
    conn: Connection, sid: str, printer: TurnPrinter, *, follow: bool
) -> dict[str, Any] | None:
    """Print the turn's events; its `turn.finished` data, or None when it has not ended
    (and `follow` is off: what was replayed is printed)."""
    turn: str | None = None
    waiting_told: set[str] = set()
    while True:
        notification = conn.next_notification(timeout=None if follow else 0.0)
        if notification is None:
            if follow:
                continue
            return None
        event = parse_event(notification)
        if event is None or event.session != sid:
            continue
        if event.kind == EventKind.TURN_STARTED and turn is None:
            turn = event.turn
        printer.event(event.kind, event.data, notification)
        if event.kind == EventKind.APPROVAL_REQUESTED and follow:
            request = str(event.data.get("request"))
            if request not in waiting_told:
                waiting_told.add(request)
                printer.notice(f"waiting for an answer: harness approve {short_id(sid)}")
        if event.kind == EventKind.TURN_FINISHED and event.turn == turn:
            return dict(event.data)
