"""`harness approve [ID]`: a client that only answers approval requests.

It watches one session, or with no ID every session (later ones too), shows
each request's full diff, and reads y/n/s (and a, r where offered). When another
client answers first the question is withdrawn at once, with one line saying who
answered. Ctrl-C leaves, and so does the end of input, also while no question
is up (`echo y | harness approve ID` answers once and exits). When the daemon
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

from coding_harness.client.render.approval_words import resolved_text
from coding_harness.client.render.style import Style, color_wanted
from coding_harness.client.session import approval_prompt
from coding_harness.client.session.answer_wait import AnsweredElsewhere, LineSource, read_line
from coding_harness.client.session.bell import BellSettings, bell_settings
from coding_harness.client.session.launcher import START_TIMEOUT, redial
from coding_harness.protocol import errors, exit_codes, methods, paths
from coding_harness.protocol.client import Connection, DaemonUnreachable, ProtocolViolation
from coding_harness.protocol.events import parse_event
from coding_harness.protocol.methods import EventKind
from coding_harness.protocol.version import __version__

USAGE = "usage: harness approve [SESSION]"


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
        self._lines = LineSource()
        self._backlog: list[dict[str, Any]] = []  # events read while a question was up

    def run(self) -> int:
        while not self._lines.at_end():
            event = parse_event(self._next())
            if event is None:
                continue
            if event.kind == EventKind.APPROVAL_RESOLVED:
                self._answered.add(event.text("request"))
                continue
            request = event.text("request")
            fresh = event.kind == EventKind.APPROVAL_REQUESTED and request not in self._answered
            if fresh and self._ask(event.session, event.data) is None:
                break
        return exit_codes.OK

    def _next(self) -> dict[str, Any] | None:
        """The next notification, or None once standard input has ended (nothing typed
        ahead is lost: it stays for the next question)."""
        if self._backlog:
            return self._backlog.pop(0)
        if self.conn.has_buffered() or self._lines.ended:
            return self.conn.next_notification(timeout=None)
        ready, _, _ = select.select([self._lines.fd, self.conn.fileno()], [], [])
        if self._lines.fd in ready:
            self._lines.fill()
        return self.conn.next_notification(timeout=0.05) if self.conn.fileno() in ready else None

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
                kind=data,
                bell=self.bell,
                session=session,
            )
        except AnsweredElsewhere as exc:
            self.style.line(resolved_text(exc.resolved, mine=False), "dim")
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
        except errors.ApprovalNotPending:
            self.style.line("that question was already answered elsewhere", "yellow")
            return True
        self.style.line(resolved_text({"decision": decision}, mine=True), "dim")
        return True

    def _read_line(self) -> str:
        """A line from standard input, unless the request is answered elsewhere first."""
        return read_line(self._lines, self.conn, self._check_withdrawn)

    def _check_withdrawn(self, note: dict[str, Any] | None) -> None:
        """An event read while asking: kept for later (another session's question)."""
        event = parse_event(note)
        if note is not None and event is not None:
            self._backlog.append(note)
        if event is not None and event.kind == EventKind.APPROVAL_RESOLVED:
            self._answered.add(event.text("request"))
            if event.text("request") == self._asking:
                raise AnsweredElsewhere(event.data)
