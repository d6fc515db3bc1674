"""The REPL's event thread hands on only this session's events of kinds it knows."""

from __future__ import annotations

from typing import Any

from coding_harness.client.repl.events import EventPump
from coding_harness.protocol.client import DaemonUnreachable
from coding_harness.protocol.events import Event


def event(seq: object, kind: object, data: object, session: object = "s-1") -> dict[str, Any]:
    params = {"session": session, "seq": seq, "kind": kind, "data": data}
    return {"jsonrpc": "2.0", "method": "event", "params": params}


class Script:
    """A connection that hands out scripted notifications, then is cut off."""

    def __init__(self, *notes: dict[str, Any] | None) -> None:
        self.notes = list(notes)

    def next_notification(self, timeout: float | None = None) -> dict[str, Any] | None:
        if not self.notes:
            raise DaemonUnreachable("the script ended")
        return self.notes.pop(0)


def test_unknown_malformed_and_foreign_events_never_reach_the_repl() -> None:
    shown: list[Event] = []
    lost: list[str] = []
    conn: Any = Script(
        None,  # the poll timed out
        event(1, "turn.started", {"turn": "t-1", "text": "hi"}),
        event(2, "checkpoint.made", {"turn": "t-1"}),  # a newer daemon's kind
        event(3, "notice", ["not", "an", "object"]),
        event(4, "notice", {"message": "elsewhere"}, session="s-2"),
        {"jsonrpc": "2.0", "method": "log", "params": {"text": "not an event"}},
        event(5, "turn.finished", {"turn": "t-1", "exit_code": 0, "reply": "ok"}),
    )
    pump = EventPump(conn, "s-1", shown.append, lost.append)
    pump.start()
    pump._thread.join(timeout=10)
    assert [(e.seq, e.kind) for e in shown] == [(1, "turn.started"), (5, "turn.finished")]
    assert lost == ["the script ended"]
