"""`harness undo [--turn ID] [--session ID] [--force] [--list]`: put back what the agent wrote.

Without `--session` it works on the most recently active session of this
folder; without `--turn`, on that session's last turn that wrote files. It
prints the diff of what it puts back, and each file it refused (someone changed
it since the agent wrote it) with the way past it. `--list` shows the
checkpoints instead, and the turns whose checkpoints the store's cap dropped.
File names and turn ids come from the workspace and the daemon: each is printed
as a `field` (control characters, newlines and tabs escaped), so a name made by
a recipe cannot move the cursor, retitle the terminal or fake a line. Exit
codes: 0 all put back, 3 a file was refused, 4 no daemon, 5 bad arguments or
nothing to undo.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from coding_harness.client.render.sanitize import field
from coding_harness.client.render.style import Style, color_wanted
from coding_harness.client.session.latest import latest_session_here
from coding_harness.client.session.launcher import connect_or_start
from coding_harness.protocol import errors, exit_codes, methods, paths
from coding_harness.protocol.client import DaemonUnreachable
from coding_harness.protocol.version import __version__


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="harness undo",
        description="Put back every file the last turn (or turn ID, and every later one) "
        "wrote; an undo can itself be undone.",
    )
    parser.add_argument("--turn", help="the turn to undo (and every later one)")
    parser.add_argument("--session", help="the session (default: the latest in this folder)")
    parser.add_argument("--force", action="store_true", help="put back files changed since")
    parser.add_argument("--list", action="store_true", help="show the checkpoints")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    try:
        options = parse(argv)
    except SystemExit as exc:
        return exit_codes.OK if exc.code == 0 else exit_codes.BAD_ARGUMENTS
    style = Style(sys.stderr, color=color_wanted(sys.stderr, False))
    try:
        session = options.session or latest_session_here()
        if session is None:
            style.line("harness: no session in this folder; pass --session ID", "red")
            return exit_codes.BAD_ARGUMENTS
        with connect_or_start(paths.socket_path()) as conn:
            conn.initialize("harness-undo", __version__, approvals=False)
            if options.list:
                listing = conn.request(methods.SESSION_CHECKPOINTS, {"session": session})
                return show_checkpoints(listing, session, Style(sys.stdout))
            params: dict[str, Any] = {"session": session, "force": options.force}
            if options.turn:
                params["turn"] = options.turn
            return show_undo(conn.request(methods.SESSION_UNDO, params), style)
    except DaemonUnreachable as exc:
        style.line(f"harness: cannot reach the daemon: {exc}", "red")
        return exit_codes.DAEMON_UNREACHABLE
    except errors.RpcError as exc:
        style.line(f"harness: {exc.message}", "red")
        return exit_codes.BAD_ARGUMENTS


def show_checkpoints(listing: dict[str, Any], session: str, out: Style) -> int:
    """The checkpoints left, a line per turn, on `out` (standard output)."""
    checkpoints = listing.get("checkpoints") or []
    if not checkpoints:
        out.line(f"no checkpoints in session {field(session)}")
    for entry in checkpoints:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(entry.get("at", 0))))
        files = ", ".join(field(str(f)) for f in entry.get("files", []))
        out.line(f"{field(str(entry.get('turn')))}  {when}  {files}")
    for turn in listing.get("dropped") or []:
        out.line(f"{field(str(turn))}  dropped: the checkpoint store went over its cap")
    return exit_codes.OK


def show_undo(result: dict[str, Any], style: Style, out: Style | None = None) -> int:
    """The diffs put back and the files refused on `style` (standard error), what was
    put back and how to undo it on `out` (standard output)."""
    out = out or Style(sys.stdout)
    for shown in result.get("diffs") or []:
        style.diff(str(shown.get("diff", "")), str(shown.get("path", "")))
    restored = [field(str(p)) for p in result.get("restored") or []]
    if restored:
        turn, undo_turn = field(str(result.get("turn"))), field(str(result.get("undo_turn")))
        out.line(f"put back (turn {turn} and later): {', '.join(restored)}")
        out.line(f"undo this with: harness undo --turn {undo_turn}")
    for skipped in result.get("skipped") or []:
        path, reason = field(str(skipped.get("path"))), field(str(skipped.get("reason")))
        style.line(f"not put back: {path}: {reason}", "yellow")
    return exit_codes.EDIT_REJECTED if result.get("skipped") else exit_codes.OK
