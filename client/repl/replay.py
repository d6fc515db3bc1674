"""An attached session's last turns, shown through the live renderer.

`harness attach` (and the REPL with `--session`) shows what happened before it
came by replaying the session's own events, not by rewriting its history: the
events go to the same function that shows live ones, so a past turn reads
exactly as it did live (tool lines and their outcomes, Markdown, the check,
the task as the user typed it, not what the harness added to it).

The replay reads on a connection of its own (`session.attach` with
`since_seq`), the last REPLAY_EVENTS events up to the `seq` the live attach
started from (`upto`), so no event is shown twice or missed. It starts at a
turn's beginning: the last `turns` turns that fit in that window. An approval
still waiting is left to the live attach, which sends it again.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from coding_harness.client.render.printer import TurnPrinter
from coding_harness.client.render.style import Style
from coding_harness.client.repl.banner import print_messages
from coding_harness.protocol import methods
from coding_harness.protocol.client import Connection, connect
from coding_harness.protocol.events import Event, parse_event
from coding_harness.protocol.methods import EventKind
from coding_harness.protocol.version import __version__

REPLAY_EVENTS = 20_000
REPLAY_TURNS = 10


class Replayed:
    """What `past_events` found: the events to show, and how many turns came before them
    (`earlier`; None when the window may have cut older ones off uncounted)."""

    __slots__ = ("earlier", "events")

    def __init__(self, events: list[Event], earlier: int | None) -> None:
        self.events, self.earlier = events, earlier


def past_events(path: Path, session: str, upto: int, turns: int = REPLAY_TURNS) -> Replayed:
    """The events of the session's last `turns` turns up to `upto`, read from the daemon."""
    since = max(0, upto - REPLAY_EVENTS)
    with connect(path) as conn:
        conn.initialize("harness-repl", __version__, approvals=False)
        conn.request(methods.SESSION_ATTACH, {"session": session, "since_seq": since})
        found: list[Event] = []
        while conn.has_buffered():
            event = parse_event(conn.next_notification(timeout=0))
            if event is not None and event.session == session and event.seq <= upto:
                found.append(event)
    return last_turns(found, turns, cut=since > 0)


def last_turns(events: list[Event], turns: int, *, cut: bool = False) -> Replayed:
    """The last `turns` whole turns of `events` (and what followed them); approval
    requests still unanswered at the end are left out."""
    starts = [i for i, event in enumerate(events) if event.kind == EventKind.TURN_STARTED]
    if not starts:
        return Replayed([], None if cut else 0)
    first = starts[max(0, len(starts) - turns)]
    before = starts.index(first)
    answered = {
        event.data.get("request") for event in events if event.kind == EventKind.APPROVAL_RESOLVED
    }
    shown = [
        event
        for event in events[first:]
        if event.kind != EventKind.APPROVAL_REQUESTED or event.data.get("request") in answered
    ]
    return Replayed(shown, None if cut else before)


def replay(
    conn: Connection,
    session: dict[str, Any],
    show: Callable[[Event], None],
    printer: TurnPrinter,
    style: Style,
) -> None:
    """Show the attached `session`'s last turns through `show` (the live renderer) on
    `printer`, with how many earlier turns were left out; a session with messages but
    no turns to replay shows its last messages."""
    sid = str(session["session"])
    found = past_events(conn.path, sid, int(session.get("last_seq") or 0))
    if found.earlier is None:
        printer.chat("(earlier turns not shown)", "dim")
    elif found.earlier:
        turns = "turn" if found.earlier == 1 else "turns"
        printer.chat(f"({found.earlier} earlier {turns} not shown)", "dim")
    for event in found.events:
        show(event)
    if not found.events and session.get("messages") and printer.chatter:
        print_messages(style, conn, sid)
