"""Following one turn from submit to `turn.finished`, and cancelling turns.

Reads the session's events, hands each to the printer, answers approval
requests through a callback, turns Ctrl-C into `session.cancel` (a second
Ctrl-C gives up waiting), and returns the `turn.finished` data. The REPL,
which follows events on a thread of its own, uses `cancel` and `respond`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coding_harness.protocol import errors, methods
from coding_harness.protocol.client import Connection
from coding_harness.protocol.methods import EventKind

from .printer import TurnPrinter

if TYPE_CHECKING:
    from collections.abc import Callable

    # Returns (decision, reason), or None when this client cannot answer.
    Answerer = Callable[[dict[str, Any]], tuple[str, str] | None]


class TurnDriver:
    def __init__(
        self, conn: Connection, session: str, printer: TurnPrinter, answer: Answerer
    ) -> None:
        self.conn = conn
        self.session = session
        self.printer = printer
        self.answer = answer
        self.last_seq = 0
        self._cancel_sent = False

    def follow(self, turn: str) -> dict[str, Any]:
        """Process events until `turn` finishes; return its `turn.finished` data."""
        self._cancel_sent = False
        while True:
            try:
                notification = self.conn.next_notification(timeout=None)
            except KeyboardInterrupt:
                self._interrupted()
                continue
            if notification is None:
                continue
            finished = self._handle(notification, turn)
            if finished is not None:
                return finished

    def cancel(self, note: str = "cancelling the turn") -> bool:
        """Ask the daemon to stop the running turn; False when none was running."""
        self.printer.notice(note, "yellow")
        result = self.conn.request(methods.SESSION_CANCEL, {"session": self.session})
        return bool((result or {}).get("cancelled"))

    def respond(self, request: dict[str, Any], decision: str, reason: str = "") -> bool:
        """Answer an approval request; False (and a notice) when it was already resolved."""
        try:
            self.conn.request(
                methods.APPROVAL_RESPOND,
                {
                    "request": request.get("request"),
                    "decision": decision,
                    "reason": reason,
                    "session": self.session,
                },
            )
        except errors.ApprovalNotPending as exc:
            self.printer.notice(exc.message)
            return False
        return True

    def _handle(self, notification: dict[str, Any], turn: str) -> dict[str, Any] | None:
        if notification.get("method") != methods.EVENT:
            return None
        params = notification.get("params") or {}
        if params.get("session") != self.session:
            return None
        self.last_seq = max(self.last_seq, int(params.get("seq", 0)))
        kind, data = str(params.get("kind", "")), params.get("data") or {}
        self.printer.event(kind, data, notification)
        if kind == EventKind.APPROVAL_REQUESTED:
            self._approve(data)
        if kind == EventKind.TURN_FINISHED and data.get("turn") == turn:
            return dict(data)
        return None

    def _approve(self, data: dict[str, Any]) -> None:
        try:
            answer = self.answer(data)
        except KeyboardInterrupt:
            self._interrupted()
            return
        if answer is None:
            self.printer.notice(
                f"waiting for another client to answer: harness approve {self.session}"
            )
            return
        self.respond(data, *answer)

    def _interrupted(self) -> None:
        if self._cancel_sent:
            raise KeyboardInterrupt
        self._cancel_sent = True
        self.cancel("cancelling the turn (Ctrl-C again to stop waiting)")
