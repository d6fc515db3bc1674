"""Sessions: a workspace, its history, its numbered events and its clients.

Every event gets the next `seq` of its session and is kept in the session's
log, so `session.attach` with `since_seq` replays exactly what a client
missed. Events go to every attached connection as `event` notifications.
"""

from __future__ import annotations

import itertools
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coding_harness.protocol import methods

from .approvals import PendingApprovals
from .connection import Connection
from .seams import JSONObject, Usage

# Deltas are many and small; the log keeps this many events per session.
EVENT_LOG_LIMIT = 50_000


@dataclass(kw_only=True, slots=True)
class Event:
    seq: int
    kind: str
    data: JSONObject

    def notification(self, session_id: str) -> JSONObject:
        return {
            "jsonrpc": "2.0",
            "method": methods.EVENT,
            "params": {
                "session": session_id,
                "seq": self.seq,
                "kind": self.kind,
                "data": self.data,
            },
        }


@dataclass(kw_only=True)
class Session:
    id: str
    cwd: Path
    provider: str | None = None
    model: str | None = None
    key_env: dict[str, str] = field(default_factory=dict, repr=False)
    history: list[JSONObject] = field(default_factory=list)
    created_at: float = field(default_factory=time.time)
    last_activity: float = field(default_factory=time.time)
    state: str = "idle"
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = 0.0
    subscribers: dict[str, Connection] = field(default_factory=dict)
    approvals: PendingApprovals = field(init=False)
    events: list[Event] = field(default_factory=list)
    _seq: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def __post_init__(self) -> None:
        self.approvals = PendingApprovals(self)

    def emit(self, kind: str, data: JSONObject) -> Event:
        event = Event(seq=next(self._seq), kind=kind, data=data)
        self.events.append(event)
        if len(self.events) > EVENT_LOG_LIMIT:
            del self.events[: len(self.events) - EVENT_LOG_LIMIT]
        self.last_activity = time.time()
        message = event.notification(self.id)
        for conn in list(self.subscribers.values()):
            conn.send(message)
        return event

    @property
    def last_seq(self) -> int:
        return self.events[-1].seq if self.events else 0

    def attach(self, conn: Connection, since_seq: int | None) -> list[Event]:
        """Subscribe `conn`; return what it must be sent first."""
        self.subscribers[conn.id] = conn
        conn.attached.add(self.id)
        if since_seq is not None:
            return [e for e in self.events if e.seq > since_seq]
        pending = self.approvals.pending_seqs()
        return [e for e in self.events if e.seq in pending]

    def detach(self, conn: Connection) -> None:
        self.subscribers.pop(conn.id, None)
        conn.attached.discard(self.id)

    def summary(self) -> JSONObject:
        return {
            "session": self.id,
            "cwd": str(self.cwd),
            "state": self.state,
            "clients": len(self.subscribers),
            "created_at": self.created_at,
            "last_activity": self.last_activity,
            "provider": self.provider,
            "model": self.model,
            "usage": self.usage.to_wire(),
            "cost_usd": self.cost_usd,
            "last_seq": self.last_seq,
        }


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


class SessionTable:
    def __init__(self) -> None:
        self._sessions: dict[str, Session] = {}

    def add(self, session: Session) -> None:
        self._sessions[session.id] = session

    def get(self, session_id: str) -> Session | None:
        return self._sessions.get(session_id)

    def all(self) -> list[Session]:
        return sorted(self._sessions.values(), key=lambda s: s.created_at)

    def __len__(self) -> int:
        return len(self._sessions)

    def detach_everywhere(self, conn: Connection) -> None:
        for session_id in list(conn.attached):
            session = self._sessions.get(session_id)
            if session is not None:
                session.detach(conn)


def to_wire_events(session: Session, events: list[Event]) -> list[Any]:
    return [event.notification(session.id) for event in events]
