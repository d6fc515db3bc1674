"""`harness approve [ID]`: a client that only answers approval requests.

It watches one session, or with no ID every session (later ones too), shows
each request's full diff, and reads y/n/s. When another client answers first
the question is withdrawn. Ctrl-C or end of input leaves. When the daemon
restarts or crashes it connects again (starting one when none answers) and
attaches anew. A question left
unanswered for `notify.after_seconds` rings the terminal bell once
(`client/session/bell.py`: `notify.bell`, `CODING_HARNESS_BELL=off`).
"""

from __future__ import annotations

import select
import sys
from collections.abc import Callable
from typing import Any

from coding_harness.client.render.style import Style, color_wanted
from coding_harness.client.session import approval_prompt
from coding_harness.client.session.bell import BellSettings, bell_settings
from coding_harness.client.session.launcher import START_TIMEOUT, redial
from coding_harness.protocol import errors, exit_codes, methods, paths
from coding_harness.protocol.client import Connection, DaemonUnreachable, ProtocolViolation
from coding_harness.protocol.events import parse_event
from coding_harness.protocol.methods import EventKind
from coding_harness.protocol.version import __version__

USAGE = "usage: harness approve [SESSION]"


class Withdrawn(Exception):
    """The request was answered elsewhere while this client was asking."""


def main(argv: list[str]) -> int:
    if len(argv) > 1 or (argv and argv[0].startswith("-")):
        print(USAGE, file=sys.stderr)
        return exit_codes.BAD_ARGUMENTS
    style = Style(sys.stderr, color=color_wanted(sys.stderr, False))
    target = argv[0] if argv else "*"

    def introduce(conn: Connection) -> None:
        conn.initialize("harness-approve", __version__)
        conn.request(methods.SESSION_ATTACH, {"session": target})

    try:
        with redial(paths.socket_path(), introduce, seconds=START_TIMEOUT) as conn:
            scope = f"session {target}" if argv else "every session"
            style.line(f"answering approvals for {scope}; Ctrl-C to stop", "dim")
            return _keep_answering(Approver(conn, style), introduce)
    except DaemonUnreachable as exc:
        style.line(f"harness: {exc}", "red")
        return exit_codes.DAEMON_UNREACHABLE
    except errors.RpcError as exc:
        style.line(f"harness: {exc.message}", "red")
        return exit_codes.BAD_ARGUMENTS
    except KeyboardInterrupt:
        return exit_codes.OK


def _keep_answering(approver: Approver, introduce: Callable[[Connection], None]) -> int:
    """`approver.run`, over a new connection each time the daemon restarts or crashes
    (started again when it is gone); the requests still waiting come with the attach."""
    try:
        while True:
            try:
                return approver.run()
            except DaemonUnreachable as exc:
                if isinstance(exc, ProtocolViolation):
                    raise
                approver.style.line(f"{exc}; reconnecting", "yellow")
                approver.conn.close()
                approver.conn = redial(paths.socket_path(), introduce)
                approver.style.line("reconnected", "dim")
    finally:
        approver.conn.close()


class Approver:
    def __init__(self, conn: Connection, style: Style, bell: BellSettings | None = None) -> None:
        self.conn = conn
        self.style = style
        self.bell = bell or bell_settings()
        self._asking: str | None = None
        self._answered: set[str] = set()

    def run(self) -> int:
        while True:
            event = parse_event(self.conn.next_notification(timeout=None))
            if event is None:
                continue
            if event.kind == EventKind.APPROVAL_RESOLVED:
                self._answered.add(event.text("request"))
                continue
            request = event.text("request")
            fresh = event.kind == EventKind.APPROVAL_REQUESTED and request not in self._answered
            if fresh and self._ask(event.session, event.data) is None:
                return exit_codes.OK

    def _ask(self, session: str, data: dict[str, Any]) -> bool | None:
        """True when answered or withdrawn; None at end of input."""
        request = str(data.get("request"))
        self.style.line(f"\nsession {session}: {data.get('summary', '')}", "bold")
        if data.get("diff"):  # a command to run has no diff
            self.style.diff(str(data["diff"]), str(data.get("path", "")))
        self._asking = request
        try:
            answer = approval_prompt.ask(
                self.style,
                read_line=self._read_line,
                kind=data.get("kind"),
                bell=self.bell,
                session=session,
            )
        except Withdrawn as exc:
            self.style.line(f"\n{exc}", "dim")
            return True
        finally:
            self._asking = None
        if answer is None:
            return None
        decision, reason = answer
        try:
            self.conn.request(
                methods.APPROVAL_RESPOND,
                {"request": request, "decision": decision, "reason": reason, "session": session},
            )
        except errors.ApprovalNotPending as exc:
            self.style.line(exc.message, "yellow")
        return True

    def _read_line(self) -> str:
        """A line from standard input, unless the request is answered elsewhere first."""
        while True:
            if self.conn.has_buffered():
                self._check_withdrawn(self.conn.next_notification(timeout=0))
                continue
            ready, _, _ = select.select([sys.stdin, self.conn], [], [])
            if sys.stdin in ready:
                return sys.stdin.readline()
            self._check_withdrawn(self.conn.next_notification(timeout=0.05))

    def _check_withdrawn(self, note: dict[str, Any] | None) -> None:
        event = parse_event(note)
        if event is not None and event.kind == EventKind.APPROVAL_RESOLVED:
            self._answered.add(event.text("request"))
            if event.text("request") == self._asking:
                data = event.data
                raise Withdrawn(f"answered by {data.get('client')}: {data.get('decision')}")
