"""`parse_event`: every known kind becomes an `Event`; anything else is skipped."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from coding_harness.protocol.events import KNOWN_KINDS, Event, parse_event
from coding_harness.protocol.methods import EventKind

DOCS = Path(__file__).resolve().parents[3] / "docs" / "protocol.md"


def note(kind: object = EventKind.NOTICE, **params: object) -> dict[str, Any]:
    fields: dict[str, object] = {
        "session": "s-1",
        "seq": 7,
        "kind": kind,
        "data": {"turn": "t-1", "request": "a-1", "message": "hi"},
    }
    return {"jsonrpc": "2.0", "method": "event", "params": {**fields, **params}}


def test_the_known_kinds_are_the_catalogue_in_protocol_methods() -> None:
    documented = set(re.findall(r"^\| `([a-z._]+)` \|", DOCS.read_text(), re.MULTILINE))
    assert documented >= KNOWN_KINDS, "every event kind has a row in docs/protocol.md"
    assert EventKind.TURN_FINISHED in KNOWN_KINDS
    assert EventKind.EDIT_WRITE in KNOWN_KINDS
    assert all(isinstance(kind, str) and kind for kind in KNOWN_KINDS)
    assert "TURN_FINISHED" not in KNOWN_KINDS  # values, not attribute names


@pytest.mark.parametrize("kind", sorted(KNOWN_KINDS))
def test_each_known_kind_is_parsed(kind: str) -> None:
    notification = note(kind)
    event = parse_event(notification)
    assert isinstance(event, Event)
    assert (event.session, event.seq, event.kind) == ("s-1", 7, kind)
    assert event.data == notification["params"]["data"]
    assert event.notification is notification
    assert event.turn == "t-1"


def test_an_unknown_kind_is_skipped() -> None:
    assert parse_event(note("checkpoint.made")) is None  # a newer daemon's event


@pytest.mark.parametrize(
    "notification",
    [
        None,
        "event",
        [],
        {"jsonrpc": "2.0", "method": "log", "params": note()["params"]},
        {"jsonrpc": "2.0", "method": "event"},
        {"jsonrpc": "2.0", "method": "event", "params": ["s-1", 7]},
        note(session=None),
        note(session=3),
        note(seq=None),
        note(seq="7"),
        note(seq=True),
        note(seq=-1),
        note(seq=1.5),
        note(kind=None),
        note(kind=["turn.finished"]),  # unhashable: no crash either
        note(data=None),
        note(data=["turn.finished"]),
        note(data="text"),
        note(EventKind.TURN_FINISHED, data={"exit_code": 0, "reply": "no turn id"}),
        note(EventKind.TURN_STARTED, data={"turn": 12}),
        note(EventKind.APPROVAL_REQUESTED, data={"summary": "edit a.py"}),
        note(EventKind.APPROVAL_RESOLVED, data={"request": None, "decision": "yes"}),
    ],
)
def test_a_malformed_notification_is_skipped(notification: object) -> None:
    assert parse_event(notification) is None


def test_the_accessors_read_data_safely() -> None:
    event = parse_event(note(data={"turn": 5, "message": None, "reply": 42}))
    assert event is not None
    assert event.turn is None  # not a string: no turn
    assert event.text("message") == ""
    assert event.text("reply") == "42"
    assert event.text("absent") == ""
    assert "notice" in repr(event)
