"""The REPL's event thread and the state it shares with the prompt.

`EventPump` reads the session's events on a connection of its own (the
prompt's thread uses another one, so neither waits on the other) and hands
each to a callback. `ReplState` is what both threads need to know: the turn
running now, the approval requests waiting for an answer, a skipped request
waiting for its reason, and the tasks this client submitted that have not
started yet (so a task typed elsewhere can be told apart and echoed).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from coding_harness.protocol.client import Connection, DaemonUnreachable
from coding_harness.protocol.events import Event, parse_event

POLL_SECONDS = 0.2


class ReplState:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.running: str | None = None
        self.approvals: list[dict[str, Any]] = []
        self.reason_for: dict[str, Any] | None = None
        self._submitted: list[str] = []

    def submitted(self, text: str) -> None:
        with self._lock:
            self._submitted.append(text)

    def started(self, turn: str, text: str) -> bool:
        """Record a started turn; True when this client submitted it."""
        with self._lock:
            self.running = turn
            if text in self._submitted:
                self._submitted.remove(text)
                return True
            return False

    def finished(self, turn: str) -> None:
        """A turn ended: its approvals can no longer be answered."""
        with self._lock:
            if self.running == turn:
                self.running = None
            self.approvals.clear()
            self.reason_for = None

    def requested(self, data: dict[str, Any]) -> None:
        with self._lock:
            if all(a.get("request") != data.get("request") for a in self.approvals):
                self.approvals.append(data)

    def resolved(self, request: object) -> None:
        with self._lock:
            self.approvals = [a for a in self.approvals if a.get("request") != request]
            if self.reason_for is not None and self.reason_for.get("request") == request:
                self.reason_for = None

    def await_reason(self, request: dict[str, Any]) -> None:
        """`request` was answered "skip": the next line is the reason for the model."""
        with self._lock:
            self.reason_for = request

    def pending(self) -> dict[str, Any] | None:
        with self._lock:
            return self.approvals[0] if self.approvals else None


class EventPump:
    """A daemon thread that reads one session's events until stopped or cut off."""

    def __init__(
        self,
        conn: Connection,
        session: str,
        on_event: Callable[[Event], None],
        on_lost: Callable[[str], None],
    ) -> None:
        self.conn, self.session = conn, session
        self.on_event, self.on_lost = on_event, on_lost
        self.lost: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="harness-events", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=2 * POLL_SECONDS + 1)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                note = self.conn.next_notification(timeout=POLL_SECONDS)
            except DaemonUnreachable as exc:
                self.lost = str(exc)
                self.on_lost(self.lost)
                return
            event = parse_event(note)
            if event is None or event.session != self.session:
                continue  # not this session's, or no event this client knows
            try:
                self.on_event(event)
            except Exception as exc:
                self.lost = f"the REPL failed to show an event: {exc!r}"
                self.on_lost(self.lost)
                raise
