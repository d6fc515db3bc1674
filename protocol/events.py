"""Event notifications read at the boundary: `parse_event` and the `Event` record.

The daemon's one notification is `event {session, seq, kind, data}`
(docs/protocol.md). A client turns each into an `Event` here and nowhere else.
An event of a kind this client does not know, or a notification that is not a
well-formed event, gives None and is skipped: an older client keeps working
with a newer daemon, and a garbled event never crashes one.

The record is a plain class with slots, not a dataclass: this module is on the
one-shot path, where importing `dataclasses` costs a run ~8 ms.
"""

from __future__ import annotations

from coding_harness.protocol import methods
from coding_harness.protocol.methods import EventKind

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

KNOWN_KINDS: Final = frozenset(
    value for name, value in vars(EventKind).items() if name.isupper() and isinstance(value, str)
)
# The `data` keys a kind cannot do without (each a string): the turn a start or an
# end belongs to, the approval request a question or its answer is about.
REQUIRED: Final = {
    EventKind.TURN_STARTED: ("turn",),
    EventKind.TURN_FINISHED: ("turn",),
    EventKind.APPROVAL_REQUESTED: ("request",),
    EventKind.APPROVAL_RESOLVED: ("request",),
}


class Event:
    """One event of a session: its `seq`, its `kind` (one of `EventKind`), its `data`.

    `notification` is the JSON-RPC message it came in, as received (the
    `stream-json` output prints its params unchanged).
    """

    __slots__ = ("data", "kind", "notification", "seq", "session")

    def __init__(
        self,
        *,
        session: str,
        seq: int,
        kind: str,
        data: dict[str, Any],
        notification: dict[str, Any],
    ) -> None:
        self.session = session
        self.seq = seq
        self.kind = kind
        self.data = data
        self.notification = notification

    def __repr__(self) -> str:
        return f"Event(session={self.session!r}, seq={self.seq}, kind={self.kind!r})"

    @property
    def turn(self) -> str | None:
        """The turn this event belongs to, when its data names one."""
        turn = self.data.get("turn")
        return turn if isinstance(turn, str) else None

    def text(self, key: str) -> str:
        """`data[key]` as text, empty when absent (a message, a reply, a summary)."""
        value = self.data.get(key)
        return "" if value is None else str(value)


def parse_event(notification: object) -> Event | None:
    """The `Event` in `notification`, or None when it is no event this client knows."""
    if not isinstance(notification, dict) or notification.get("method") != methods.EVENT:
        return None
    params = notification.get("params")
    if not isinstance(params, dict):
        return None
    session, seq, kind = params.get("session"), params.get("seq"), params.get("kind")
    data = params.get("data")
    if not isinstance(session, str) or not isinstance(data, dict):
        return None
    if not isinstance(kind, str) or kind not in KNOWN_KINDS:
        return None
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
        return None
    if any(not isinstance(data.get(key), str) for key in REQUIRED.get(kind, ())):
        return None
    return Event(session=session, seq=seq, kind=kind, data=data, notification=notification)
