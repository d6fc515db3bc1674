"""What a session's turns are doing: for `session.list` and `harness wait`.

`TurnActivity` keeps the turn submitted last, the one running, and the last one
finished with its exit code, and which turns were submitted to run in the
background (`options.background`: `harness -p ... --bg`, a REPL line ending in
`&`). It watches the session's own events (`Session.emit` hands each one
here), so every way a turn ends is seen alike: its worker, a cancel before it
started, a daemon restart. A session read back from the store is primed from
its kept events at its first look. When a background turn ends, `on_background_end`
is called with it (the session sends the notifications, `notify.py`).

`wire_state` is the state `session.list` reports: `waiting` (an approval),
`queued` (a request waits for the model), `running`, `failed` (idle, its last
turn failed: an exit code other than 0 and 130) or `idle`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from coding_harness.daemon.agent.seams import JSONObject
from coding_harness.daemon.sessions.events import Event
from coding_harness.protocol import exit_codes
from coding_harness.protocol.methods import EventKind

REPLY_CHARS = 200


@dataclass(frozen=True, kw_only=True, slots=True)
class FinishedTurn:
    turn: str
    exit_code: int
    at: float
    reply: str  # its first REPLY_CHARS characters
    background: bool = False

    def to_wire(self) -> JSONObject:
        return {"turn": self.turn, "exit_code": self.exit_code, "at": self.at}


class TurnActivity:
    def __init__(self) -> None:
        self.submitted: str | None = None
        self.started: str | None = None
        self.started_seq: int | None = None  # the seq of its `turn.started`
        self.finished: FinishedTurn | None = None
        self.background: set[str] = set()
        self.first_text = ""  # the first turn's task, the title until the history has it
        self.on_background_end: Callable[[FinishedTurn], object] | None = None
        self._primed = False

    def submit(self, turn: str, *, background: bool) -> None:
        """A turn was queued (`session.submit`)."""
        self.submitted = turn
        if background:
            self.background.add(turn)

    def prime(self, events: Iterable[Event]) -> None:
        """Read the turns off the kept events, once (a session restored from the store)."""
        if self._primed:
            return
        self._primed = True
        for event in events:
            self._see(event)

    def saw(self, event: Event) -> None:
        """An event the session just sent."""
        finished = self._see(event)
        if finished is not None and finished.background and self.on_background_end is not None:
            self.on_background_end(finished)

    def _see(self, event: Event) -> FinishedTurn | None:
        kind, data = event.kind, event.data
        if kind == EventKind.TURN_STARTED:
            self.started = str(data.get("turn"))
            self.started_seq = event.seq
            text = data.get("text")
            if not self.first_text and isinstance(text, str):
                self.first_text = text
            return None
        if kind != EventKind.TURN_FINISHED:
            return None
        turn = str(data.get("turn"))
        code = data.get("exit_code")
        reply = data.get("reply")
        self.finished = FinishedTurn(
            turn=turn,
            exit_code=code if isinstance(code, int) else exit_codes.MODEL_ERROR,
            at=event.at,
            reply=reply[:REPLY_CHARS] if isinstance(reply, str) else "",
            background=turn in self.background,
        )
        self.background.discard(turn)
        return self.finished

    @property
    def pending(self) -> str | None:
        """The turn a `harness wait` waits for: the latest submitted or started, while it
        has not finished; None when the session has nothing to finish."""
        latest = self.submitted or self.started
        if latest is None or (self.finished is not None and self.finished.turn == latest):
            return None
        return latest

    def wire_state(self, state: str, queued: bool) -> str:
        """The state `session.list` shows, from the session's own (idle, running, waiting)."""
        if state == "waiting":
            return "waiting"
        if state == "running":
            return "queued" if queued else "running"
        if self.pending is not None:
            return "running"  # between two turns of its queue
        if self.finished is not None and self.finished.exit_code not in (
            exit_codes.OK,
            exit_codes.INTERRUPTED,
        ):
            return "failed"
        return "idle"
