"""`harness wait ID...`: block until each session's turn ends; exit with its exit code.

The turn waited for is the one the session was last given (`pending_turn` in
`session.list`: a running turn, or one queued behind it); a session with none
answers at once with its last turn's exit code (0 when it never ran one). The
events are followed from the listing on (`session.attach` with `since_seq`),
so a turn that ends in between is not missed. With several IDs it waits for
all of them and exits with the first non-zero code among them, in the order
given, so a script can fan out (`harness -p ... --bg`) and join. Each end is
one line on standard error (`68e7d5: done (exit 0)`); an approval met on the
way is said once, with the command that answers it. Ctrl-C stops waiting and
leaves the turns running (exit 130).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from coding_harness.client.commands.background import session_row, short_id
from coding_harness.client.commands.session_call import with_daemon
from coding_harness.client.render.sanitize import field
from coding_harness.client.render.style import Style, color_wanted
from coding_harness.protocol import exit_codes, methods
from coding_harness.protocol.client import Connection
from coding_harness.protocol.events import parse_event
from coding_harness.protocol.methods import EventKind


def main(argv: list[str]) -> int:
    cmd = argparse.ArgumentParser(
        prog="harness wait",
        description="Block until each session's turn ends; exit with its exit code.",
    )
    cmd.add_argument("sessions", nargs="+", metavar="ID", help="session id, short id or prefix")
    cmd.add_argument("-q", "--quiet", action="store_true", help="say nothing, only exit")
    try:
        args = cmd.parse_args(argv)
    except SystemExit as exc:
        return exit_codes.OK if exc.code == 0 else exit_codes.BAD_ARGUMENTS
    style = Style(sys.stderr, color=color_wanted(sys.stderr, False))

    def wait_all(conn: Connection) -> int:
        rows = [session_row(conn, wanted) for wanted in args.sessions]
        codes = [_wait(conn, row, style, quiet=args.quiet) for row in rows]
        return next((code for code in codes if code != exit_codes.OK), exit_codes.OK)

    return with_daemon("harness-wait", style, wait_all)


def _wait(conn: Connection, row: dict[str, Any], style: Style, *, quiet: bool) -> int:
    sid, pending = str(row["session"]), row.get("pending_turn")
    if not isinstance(pending, str):
        last = row.get("last_turn")
        code = int(last["exit_code"]) if isinstance(last, dict) else exit_codes.OK
        if not quiet:
            said = ended_words(code) if isinstance(last, dict) else "no turn to wait for"
            style.line(f"{short_id(sid)}: {said}", "dim")
        return code
    params = {"session": sid, "since_seq": int(row.get("last_seq") or 0)}
    conn.request(methods.SESSION_ATTACH, params, timeout=300.0)
    finished = _until_finished(conn, sid, pending, style, quiet=quiet)
    conn.request(methods.SESSION_DETACH, {"session": sid})
    code = int(finished.get("exit_code", exit_codes.MODEL_ERROR))
    if not quiet:
        style.line(f"{short_id(sid)}: {ended_words(code)}", "green" if code == 0 else "red")
    return code


def _until_finished(
    conn: Connection, sid: str, turn: str, style: Style, *, quiet: bool
) -> dict[str, Any]:
    told: set[str] = set()
    while True:
        notification = conn.next_notification(timeout=None)
        event = parse_event(notification)
        if event is None or event.session != sid:
            continue
        if event.kind == EventKind.APPROVAL_REQUESTED and not quiet:
            request = event.text("request")
            if request not in told:
                told.add(request)
                what = field(event.text("path") or event.text("summary"))
                style.line(
                    f"{short_id(sid)} waits for an approval ({what}): harness approve "
                    f"{short_id(sid)}",
                    "yellow",
                )
        if event.kind == EventKind.TURN_FINISHED and event.turn == turn:
            return dict(event.data)


def ended_words(code: int) -> str:
    if code == exit_codes.OK:
        return "done (exit 0)"
    if code == exit_codes.INTERRUPTED:
        return "cancelled (exit 130)"
    return f"failed (exit {code})"
