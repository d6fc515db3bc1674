"""Sessions: a workspace, its history, its numbered events and its clients.

Every event gets the next `seq` of its session and is kept in the session's
log, so `session.attach` with `since_seq` replays exactly what a client
missed (`replay.py` sends it in pages). Events go to every attached
connection as `event` notifications and wait in `pending_events` until the
store takes them (with the next completed step, or at the next periodic
flush). No event exceeds `outgoing.EVENT_LIMIT`: a long delta is split into
several events, other events have their longest strings cut (`data.cut`).
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from coding_harness.daemon.agent.seams import JSONObject, Usage
from coding_harness.daemon.config.mcp_settings import McpServerSpec
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.server.outgoing import (
    DELTA_KINDS,
    DELTA_PIECE_CHARS,
    EVENT_LIMIT,
    HISTORY_NOTE,
    delta_pieces,
    encode_safely,
    fit_event,
    history_note,
)
from coding_harness.daemon.sessions.activity import TurnActivity
from coding_harness.daemon.sessions.approvals import PendingApprovals
from coding_harness.daemon.sessions.events import Event, PendingEvent
from coding_harness.daemon.sessions.notify import announce_ended
from coding_harness.daemon.sessions.titles import title_of
from coding_harness.protocol.methods import EventKind

if TYPE_CHECKING:
    from coding_harness.daemon.agent.fingerprint import Fingerprinter
    from coding_harness.daemon.store.db import Store

# What `session.list` and `daemon.status` report a session is doing.
SessionState = Literal["idle", "running", "waiting"]

# Deltas are many and small; memory keeps this many events per session.
EVENT_LOG_LIMIT = 50_000
# Event numbers reserved in the store at a time: events are stored every 0.25 s,
# so a crash can lose the last few, and the numbering resumes past the reservation
# (a gap) rather than reusing a `seq` a client has already seen.
SEQ_BLOCK = 1000


@dataclass(kw_only=True, slots=True)
class SessionOptions:
    """Choices the people on a session made: `/allow-cmd`, `/search`, `/budget`, `/mode`,
    and the MCP servers an editor brought."""

    extra_commands: set[str] = field(default_factory=set)
    search_enabled: bool | None = None  # None: as the config says
    search_engine: str | None = None
    token_budget: int | None = None
    # The permission mode (`protocol/modes.py`); None: the config's `agent.mode`.
    mode: str | None = None
    # MCP servers a client gave the session (an editor's, over ACP), over the config's.
    mcp_servers: dict[str, McpServerSpec] = field(default_factory=dict)

    def to_wire(self) -> JSONObject:
        return {
            "allowed_commands": sorted(self.extra_commands),
            "search_enabled": self.search_enabled,
            "search_engine": self.search_engine,
            "token_budget": self.token_budget,
            "mode": self.mode,
            "mcp_servers": sorted(self.mcp_servers),
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
    state: SessionState = "idle"  # written only by `running` and `waiting` below
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = 0.0
    subscribers: dict[str, Connection] = field(default_factory=dict)
    options: SessionOptions = field(default_factory=SessionOptions)
    approvals: PendingApprovals = field(init=False)
    activity: TurnActivity = field(default_factory=TurnActivity)  # its turns (activity.py)
    events: list[Event] = field(default_factory=list)
    pending_events: list[PendingEvent] = field(default_factory=list)
    store: Store | None = field(default=None, repr=False)
    # The workspace fingerprinter, kept across turns so each turn starts warm.
    progress_probe: Fingerprinter | None = field(default=None, repr=False)
    first_seq: int = 1
    # Whether the session was told that its commands run without a sandbox.
    sandbox_told: bool = False
    # Whether it was told that its workspace is the home folder, or holds it.
    workspace_told: bool = False

    def __post_init__(self) -> None:
        self.approvals = PendingApprovals(self, allowances=self.options.extra_commands)
        self.activity.on_background_end = lambda ended: announce_ended(
            self.id, self.cwd, self.title, ended, self.approvals.notify_settings
        )
        self._seq = itertools.count(self.first_seq)
        self._seq_reserved = self.first_seq - 1

    @property
    def title(self) -> str:
        return title_of(self.history, self.activity.first_text)

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """The session runs a turn (or a compaction) for the length of the block."""
        self.state = "running"
        try:
            yield
        finally:
            self.state = "idle"

    @contextlib.contextmanager
    def waiting(self) -> Iterator[None]:
        """The session waits for an approval for the length of the block, then is back
        to what it was (unless a turn's end made it idle meanwhile)."""
        before, self.state = self.state, "waiting"
        try:
            yield
        finally:
            if self.state == "waiting":
                self.state = before

    def emit(self, kind: str, data: JSONObject) -> Event:
        """Number, keep and send an event; a delta too long for one event becomes several."""
        text = data.get("text")
        if kind in DELTA_KINDS and isinstance(text, str) and len(text) > DELTA_PIECE_CHARS:
            pieces = delta_pieces(text)
            for piece in pieces[:-1]:
                self._emit_one(kind, {**data, "text": piece})
            return self._emit_one(kind, {**data, "text": pieces[-1]})
        return self._emit_one(kind, data)

    def _emit_one(self, kind: str, data: JSONObject) -> Event:
        self.last_activity = time.time()
        event = Event(seq=next(self._seq), kind=kind, data=data, at=self.last_activity)
        if event.seq > self._seq_reserved and self.store is not None:
            self._seq_reserved = event.seq + SEQ_BLOCK
            self.store.reserve_seq(self.id, self._seq_reserved)
        framed = self.framed(event)
        self.events.append(event)
        if len(self.events) > EVENT_LOG_LIMIT:
            del self.events[: len(self.events) - EVENT_LOG_LIMIT]
        self.pending_events.append((event.seq, kind, event.data, event.at))
        for conn in list(self.subscribers.values()):
            conn.send_encoded(framed)
        self.activity.saw(event)
        return event

    def framed(self, event: Event) -> bytes:
        """The event's notification as sent, its data cut first if it is over the limit."""
        framed = encode_safely(event.notification(self.id))
        while len(framed) > EVENT_LIMIT:
            note = self._note_for(event)  # may add `reply_message` to the data
            event.data = fit_event(event.data, len(framed), note)
            framed = encode_safely(event.notification(self.id))
        return framed

    def _note_for(self, event: Event) -> Callable[[str, int, int], str]:
        """For a turn's reply, the note names the history message that holds all of it."""
        reply = event.data.get("reply")
        if event.kind != EventKind.TURN_FINISHED or not isinstance(reply, str):
            return HISTORY_NOTE
        index = _message_holding(self.history, reply)
        if index is None:
            return HISTORY_NOTE
        event.data = {**event.data, "reply_message": index}
        where = f'session.history {{"offset": {index}, "limit": 1}} pages the whole text'
        return history_note(where)

    def take_pending_events(self) -> list[PendingEvent]:
        taken, self.pending_events = self.pending_events, []
        return taken

    def flush_events(self) -> None:
        if self.store is not None and self.pending_events:
            self.store.record_events(self.id, self.take_pending_events())

    @property
    def last_seq(self) -> int:
        return self.events[-1].seq if self.events else self.first_seq - 1

    @property
    def first_kept_seq(self) -> int:
        """The oldest event still in memory (the next one when none is)."""
        return self.events[0].seq if self.events else self.last_seq + 1

    def events_after(self, seq: int, limit: int) -> list[Event]:
        """Up to `limit` kept events numbered above `seq`, oldest first."""
        start = bisect.bisect_right(self.events, seq, key=lambda event: event.seq)
        return self.events[start : start + limit]

    def subscribe(self, conn: Connection) -> None:
        self.subscribers[conn.id] = conn
        conn.attached.add(self.id)

    def attach(self, conn: Connection) -> list[Event]:
        """Subscribe `conn` to live events; return the approvals still pending, to send first."""
        self.subscribe(conn)
        pending = self.approvals.pending_seqs()
        return [e for e in self.events if e.seq in pending]

    def detach(self, conn: Connection) -> None:
        self.subscribers.pop(conn.id, None)
        conn.attached.discard(self.id)

    def running_turn_seq(self) -> int | None:
        """The seq of the running turn's `turn.started` (a client opening the session
        mid-turn replays from it); None when no turn runs."""
        for event in reversed(self.events):
            if event.kind == EventKind.TURN_FINISHED:
                return None
            if event.kind == EventKind.TURN_STARTED:
                return event.seq
        return None

    def summary(self) -> JSONObject:
        self.activity.prime(self.events)
        finished = self.activity.finished
        return {
            "session": self.id,
            "short_id": self.id.rsplit("-", 1)[-1],
            "cwd": str(self.cwd),
            "state": self.state,
            "clients": len(self.subscribers),
            "approvers": sum(1 for c in self.subscribers.values() if c.answers_others),
            "created_at": self.created_at,
            "last_activity": self.last_activity,
            "provider": self.provider,
            "model": self.model,
            "usage": self.usage.to_wire(),
            "cost_usd": self.cost_usd,
            "last_seq": self.last_seq,
            "turn_seq": self.running_turn_seq(),
            "messages": len(self.history),
            "options": self.options.to_wire(),
            "pending_turn": self.activity.pending,
            "last_turn_seq": self.activity.started_seq,
            "last_turn": finished.to_wire() if finished is not None else None,
            "waiting_for": self.approvals.waiting_for(),
        }


def _message_holding(history: list[JSONObject], text: str) -> int | None:
    """The index of the latest assistant message whose content is `text`."""
    for index in range(len(history) - 1, max(-1, len(history) - 200), -1):
        message = history[index]
        if message.get("role") == "assistant" and message.get("content") == text:
            return index
    return None


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


class SessionTable:
    """Every session, and the connections that watch all of them (`harness approve`)."""

    def __init__(self) -> None:
        self._sessions: dict[str, Session] = {}
        self._watchers: dict[str, Connection] = {}

    def add(self, session: Session) -> None:
        self._sessions[session.id] = session
        for conn in list(self._watchers.values()):
            session.attach(conn)

    def remove(self, session_id: str) -> Session | None:
        return self._sessions.pop(session_id, None)

    def get(self, session_id: str) -> Session | None:
        return self._sessions.get(session_id)

    def all(self) -> list[Session]:
        return sorted(self._sessions.values(), key=lambda s: s.created_at)

    def __len__(self) -> int:
        return len(self._sessions)

    def watch_all(self, conn: Connection) -> list[tuple[Session, Event]]:
        """Attach `conn` to every session, now and later; return pending approvals."""
        self._watchers[conn.id] = conn
        return [(s, e) for s in self.all() for e in s.attach(conn)]

    def detach_everywhere(self, conn: Connection) -> None:
        self._watchers.pop(conn.id, None)
        for session_id in list(conn.attached):
            session = self._sessions.get(session_id)
            if session is not None:
                session.detach(conn)
