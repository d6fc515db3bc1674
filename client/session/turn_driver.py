"""Following one turn from submit to `turn.finished`, and cancelling turns.

Reads the session's events, hands each to the printer, answers approval
requests through a callback, turns Ctrl-C into `session.cancel` (a second
Ctrl-C gives up waiting), and returns the `turn.finished` data, its reply
read in full from the history when the event had to cut it. When the
connection drops (the daemon cut off a client that fell behind, or it
restarted) and a `reopen` was given, it connects again and attaches with
`since_seq`, so nothing is lost. The REPL, which follows events on a thread
of its own, uses `cancel`, `respond` and `reattach`.

While a question is on screen, `read_answer_line` reads the answer and the
daemon's events at once (`answer_wait.py`): events that come meanwhile wait in
a backlog, handled once the question is gone, and the question goes as soon as
another client answers it (`approval.resolved`), so a one-shot goes on to its
end without a key being pressed.
"""

from __future__ import annotations

import time

from coding_harness.client.render.printer import TurnPrinter
from coding_harness.protocol import errors, methods
from coding_harness.protocol.client import (
    Connection,
    DaemonUnreachable,
    ProtocolViolation,
    retry_delay,
)
from coding_harness.protocol.events import parse_event
from coding_harness.protocol.methods import EventKind

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from coding_harness.client.session.answer_wait import LineSource

    # Returns (decision, reason), or None when this client cannot answer.
    Answerer = Callable[[dict[str, Any]], tuple[str, str] | None]
    # A new connection to the daemon, initialized.
    Reopen = Callable[[], Connection]

# How long a dropped connection is tried again before the run gives up (exit 4).
RECONNECT_SECONDS = 5.0
# A replay of many missed events can take a while; the daemon paces it.
REPLAY_TIMEOUT = 300.0


def reattach(reopen: Reopen, session: str, since_seq: int) -> tuple[Connection, dict[str, Any]]:
    """A new connection attached to `session` with every event after `since_seq` replayed
    (queued on it, before the result); retried with backoff for RECONNECT_SECONDS."""
    deadline = time.monotonic() + RECONNECT_SECONDS
    attempt = 1
    while True:
        conn: Connection | None = None
        try:
            conn = reopen()
            params = {"session": session, "since_seq": since_seq}
            return conn, conn.request(methods.SESSION_ATTACH, params, timeout=REPLAY_TIMEOUT)
        except DaemonUnreachable:
            if conn is not None:
                conn.close()
            delay = retry_delay(attempt + 3)  # jittered, under 0.4 s at first, 2 s at most
            if time.monotonic() + delay > deadline:
                raise
            time.sleep(delay)
            attempt += 1


class TurnDriver:
    def __init__(
        self,
        conn: Connection,
        session: str,
        printer: TurnPrinter,
        answer: Answerer,
        *,
        reopen: Reopen | None = None,
        last_seq: int = 0,
    ) -> None:
        self.conn = conn
        self.session = session
        self.printer = printer
        self.answer = answer
        self.reopen = reopen
        self.last_seq = last_seq
        self._cancel_sent = False
        self._backlog: list[dict[str, Any]] = []  # read while a question was on screen
        self._asking: str | None = None  # the approval request on screen
        self._lines: LineSource | None = None  # standard input, once an answer is read

    def follow(self, turn: str) -> dict[str, Any]:
        """Process events until `turn` finishes; return its `turn.finished` data."""
        self._cancel_sent = False
        while True:
            try:
                if self._backlog:
                    notification: dict[str, Any] | None = self._backlog.pop(0)
                else:
                    notification = self.conn.next_notification(timeout=None)
                finished = None if notification is None else self._handle(notification, turn)
            except KeyboardInterrupt:
                self._interrupted()
                continue
            except DaemonUnreachable as exc:
                self._reconnect(exc)
                continue
            if finished is not None:
                return self._whole_reply(finished)

    def _reconnect(self, cause: DaemonUnreachable) -> None:
        """Connect again and replay what was missed; re-raise `cause` when that cannot be."""
        if self.reopen is None or isinstance(cause, ProtocolViolation):
            raise cause
        self.printer.notice(f"{cause}; reconnecting", "yellow")
        self._backlog.clear()  # all after `last_seq`: the replay brings them again
        try:
            conn, result = reattach(self.reopen, self.session, self.last_seq)
        except (DaemonUnreachable, errors.RpcError) as exc:  # RpcError: a daemon without it
            raise DaemonUnreachable(f"{cause}; could not reconnect: {exc}") from exc
        self.conn.close()
        self.conn = conn
        missed = int(result.get("missed") or 0)
        note = f"reconnected; {result.get('replayed', 0)} missed events follow"
        if missed:
            note += f" ({missed} older ones are no longer kept)"
        self.printer.notice(note, "dim")

    def _whole_reply(self, finished: dict[str, Any]) -> dict[str, Any]:
        """`finished`, with the reply read from the history when the event had to cut it."""
        index = finished.get("reply_message")
        if "reply" not in (finished.get("cut") or {}) or not isinstance(index, int):
            return finished
        from coding_harness.protocol.history_pages import read_message_text  # seldom needed

        return {**finished, "reply": read_message_text(self.conn, self.session, index)}

    def cancel(self, note: str = "cancelling the turn") -> bool:
        """Ask the daemon to stop the running turn; False when none was running."""
        self.printer.notice(note, "yellow")
        result = self.conn.request(methods.SESSION_CANCEL, {"session": self.session})
        return bool((result or {}).get("cancelled"))

    def respond(self, request: dict[str, Any], decision: str, reason: str = "") -> bool:
        """Answer an approval request; False (and a notice) when it was already resolved."""
        # Before the answer goes: the REPL's feed may show its `approval.resolved` first.
        own = self.printer.own_answers
        own.add(str(request.get("request")))
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
        except errors.ApprovalNotPending:
            own.discard(str(request.get("request")))
            self.printer.notice("that question was already answered elsewhere", "dim")
            return False
        return True

    def read_answer_line(self) -> str:
        """A line of standard input ('' at its end), read while the events keep coming:
        `AnsweredElsewhere` when the question on screen is answered by another client."""
        from coding_harness.client.session.answer_wait import LineSource, read_line

        if self._lines is None:
            self._lines = LineSource()
        return read_line(self._lines, self.conn, self._watch)

    def _watch(self, notification: dict[str, Any] | None) -> None:
        """An event read while asking: kept for later; the end of the question if it is
        this question's answer."""
        from coding_harness.client.session.answer_wait import AnsweredElsewhere

        event = parse_event(notification)
        if event is None or event.session != self.session or notification is None:
            return
        self._backlog.append(notification)
        if event.kind == EventKind.APPROVAL_RESOLVED and event.text("request") == self._asking:
            raise AnsweredElsewhere(event.data)

    def _handle(self, notification: dict[str, Any], turn: str) -> dict[str, Any] | None:
        event = parse_event(notification)
        if event is None or event.session != self.session:
            return None
        self.printer.event(event.kind, event.data, notification)
        if event.kind == EventKind.APPROVAL_REQUESTED:
            self._approve(event.data)
        # Counted once handled: an approval whose answer did not get through comes again.
        self.last_seq = max(self.last_seq, event.seq)
        if event.kind == EventKind.TURN_FINISHED and event.turn == turn:
            return dict(event.data)
        return None

    def _approve(self, data: dict[str, Any]) -> None:
        from coding_harness.client.session.answer_wait import AnsweredElsewhere

        self._asking = str(data.get("request"))
        try:
            answer = self.answer(data)
        except KeyboardInterrupt:
            self._interrupted()
            return
        except AnsweredElsewhere:
            return  # its `approval.resolved`, in the backlog, says who answered
        finally:
            self._asking = None
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
