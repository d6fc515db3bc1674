"""A session's numbered events: the record kept in memory and its notification.

Every event a session publishes is an `Event` with the next sequence number;
`notification` is the JSON-RPC `event` notification that carries it to a client.
`PendingEvent` is an event waiting to be written to the store. `turn_finished`
is the one place the `turn.finished` payload is built, however a turn ends.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from coding_harness.daemon.agent.seams import JSONObject, Usage
from coding_harness.protocol import methods

PendingEvent = tuple[int, str, JSONObject, float]


@dataclass(kw_only=True, slots=True)
class Event:
    seq: int
    kind: str
    data: JSONObject
    at: float = 0.0

    def notification(self, session_id: str) -> JSONObject:
        return {
            "jsonrpc": "2.0",
            "method": methods.EVENT,
            "params": {
                "session": session_id,
                "seq": self.seq,
                "kind": self.kind,
                "data": self.data,
                "at": self.at,
            },
        }


def turn_finished(
    turn: str,
    exit_code: int,
    reply: str,
    *,
    usage: Usage | None = None,
    cost_usd: float | None = None,
    files_changed: Iterable[str] = (),
    interrupted: bool = False,
    stopped: str | None = None,
    check: JSONObject | None = None,
) -> JSONObject:
    """The data of a `turn.finished` event (`interrupted`: ended by a daemon restart;
    `stopped`: why the agent loop stopped short of the model's answer, if it did;
    `check`: the last check after an edit, `{command, passed}`, None when none ran)."""
    data: JSONObject = {
        "turn": turn,
        "exit_code": exit_code,
        "reply": reply,
        "usage": (usage or Usage()).to_wire(),
        "cost_usd": cost_usd,
        "files_changed": list(files_changed),
        "stopped": stopped,
        "check": check,
    }
    if interrupted:
        data["interrupted"] = True
    return data
