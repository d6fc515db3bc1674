"""A session's numbered events: the record kept in memory and its notification.

Every event a session publishes is an `Event` with the next sequence number;
`notification` is the JSON-RPC `event` notification that carries it to a client.
`PendingEvent` is an event waiting to be written to the store.
"""

from __future__ import annotations

from dataclasses import dataclass

from coding_harness.daemon.agent.seams import JSONObject
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
