"""The turn driver reads events through `parse_event`: what it cannot read, it skips."""

from __future__ import annotations

import io
from typing import Any

from coding_harness.client.render.plain_view import PlainView
from coding_harness.client.render.printer import PrintOptions, TurnPrinter
from coding_harness.client.render.style import Style
from coding_harness.client.session.turn_driver import TurnDriver


def event(seq: object, kind: object, data: object, session: object = "s-1") -> dict[str, Any]:
    params = {"session": session, "seq": seq, "kind": kind, "data": data}
    return {"jsonrpc": "2.0", "method": "event", "params": params}


class Notifications:
    """A connection that hands out scripted notifications, then fails the test."""

    def __init__(self, *notes: dict[str, Any]) -> None:
        self.notes = list(notes)

    def next_notification(self, timeout: float | None = None) -> dict[str, Any] | None:
        assert self.notes, "the driver read past the end of the turn"
        return self.notes.pop(0)


def follow(*notes: dict[str, Any]) -> tuple[dict[str, Any], TurnDriver, str]:
    out, err = io.StringIO(), io.StringIO()
    printer = TurnPrinter(PlainView(Style(err), out, stream_reply=False), PrintOptions(), out)
    conn: Any = Notifications(*notes)  # all the driver reads of a `Connection` here
    driver = TurnDriver(conn, "s-1", printer, no_answer)
    return driver.follow("t-1"), driver, err.getvalue()


def no_answer(request: dict[str, Any]) -> tuple[str, str] | None:
    raise AssertionError(f"nothing should be asked: {request}")


def test_unknown_and_malformed_events_are_skipped_and_the_turn_still_ends() -> None:
    finished, driver, err = follow(
        event(1, "turn.started", {"turn": "t-1", "text": "hi"}),
        event(2, "checkpoint.made", {"turn": "t-1", "files": ["a.py"]}),  # a newer daemon's
        event("3", "notice", {"message": "a garbled seq"}),
        event(4, "notice", ["not", "an", "object"]),
        event(5, "approval.requested", {"summary": "no request id"}),
        event(6, "notice", {"message": "kept"}),
        event(7, "turn.finished", {"turn": "t-1", "exit_code": 0, "reply": "done"}),
    )
    assert finished["reply"] == "done"
    assert driver.last_seq == 7
    assert "kept" in err
    assert "garbled" not in err


def test_another_sessions_events_and_another_turns_end_are_not_this_turns() -> None:
    finished, driver, _ = follow(
        event(9, "turn.finished", {"turn": "t-1", "exit_code": 1, "reply": "x"}, session="s-2"),
        event(2, "turn.finished", {"turn": "t-0", "exit_code": 0, "reply": "earlier"}),
        event(3, "turn.finished", {"turn": "t-1", "exit_code": 0, "reply": "mine"}),
    )
    assert finished["reply"] == "mine"
    assert driver.last_seq == 3
