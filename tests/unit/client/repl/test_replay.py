"""Which past events `harness attach` replays: whole turns, the last few, and no
approval question the live attach will ask again."""

from __future__ import annotations

from typing import Any

from coding_harness.client.repl.replay import last_turns
from coding_harness.protocol.events import Event


def event(seq: int, kind: str, **data: Any) -> Event:
    params = {"session": "s", "seq": seq, "kind": kind, "data": data}
    return Event(session="s", seq=seq, kind=kind, data=data, notification={"params": params})


def turn(first: int, name: str, request: str | None = None, answered: bool = True) -> list[Event]:
    events = [event(first, "turn.started", turn=name, text=f"task {name}")]
    if request is not None:
        events.append(event(first + 1, "approval.requested", request=request))
        if answered:
            events.append(event(first + 2, "approval.resolved", request=request, decision="yes"))
    return events


def test_the_last_turns_whole_and_how_many_came_before() -> None:
    events = [
        event(1, "text.delta", text="half a turn"),
        *turn(2, "t1"),
        *turn(5, "t2"),
        *turn(9, "t3"),
    ]
    found = last_turns(events, 2)
    assert [e.data.get("turn") for e in found.events] == ["t2", "t3"]
    assert found.earlier == 1
    assert last_turns(events, 2, cut=True).earlier is None  # older ones may be out of reach


def test_an_answered_approval_is_replayed_and_a_waiting_one_left_to_the_live_attach() -> None:
    events = [*turn(1, "t1", request="a1"), *turn(5, "t2", request="a2", answered=False)]
    kinds = [(e.kind, e.data.get("request")) for e in last_turns(events, 5).events]
    assert ("approval.requested", "a1") in kinds
    assert ("approval.requested", "a2") not in kinds


def test_no_turn_no_replay() -> None:
    found = last_turns([event(1, "notice", message="hi")], 5)
    assert found.events == [] and found.earlier == 0
