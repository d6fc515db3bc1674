"""How many requests a model is sent at once: a gate per provider profile.

A local server (llama.cpp, Ollama with one slot) answers one request at a
time; a second one sent meanwhile waits inside the server, where nobody sees
it, or fails. So every generation request to a profile passes its `ModelGate`:
at most the profile's `max_parallel` in flight, the others wait in the order
they came. The turn's calls (the loop, intent, compaction) and the turn-close
notes call all pass it; the pool's look-ups of a server's window do not.

Each waiting request names its owner (a session id), so `session.list` can say
that a session is `queued` and how many requests are ahead of it (those in
flight and those queued before it), and the owner is told once as it starts
to wait (`on_queued`). A request cancelled while it waits leaves the queue; one
cancelled just as its slot came hands the slot on. A profile without a limit
still counts what is in flight. A config reload that changes the limit applies
to the next request; a raised limit lets waiting ones go at once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from coding_harness.daemon.agent.seams import EventSink, JSONObject, Model, ModelReply, StreamSink
from coding_harness.protocol.methods import EventKind

# Told the number of requests ahead when a request has to wait.
OnQueued = Callable[[int], object]


@dataclass(eq=False, slots=True)
class _Ticket:
    owner: str | None
    ready: asyncio.Future[None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class ModelGate:
    """The requests of one profile: in flight, and waiting in order."""

    def __init__(self, label: str, limit: int | None) -> None:
        self.label = label
        self.limit = limit
        self.in_flight = 0
        self.most_in_flight = 0
        self._queue: deque[_Ticket] = deque()

    def set_limit(self, limit: int | None) -> None:
        self.limit = limit
        self._fill()

    @contextlib.asynccontextmanager
    async def slot(
        self, owner: str | None = None, on_queued: OnQueued | None = None
    ) -> AsyncIterator[None]:
        """Hold one of the gate's places for the length of the block, waiting for it first
        when all are taken (or others wait already)."""
        if self._free() and not self._queue:
            self._take()
        else:
            await self._wait(_Ticket(owner), on_queued)
        try:
            yield
        finally:
            self._release()

    def waiting(self, owner: str) -> int | None:
        """How many requests are ahead of `owner`'s first waiting one; None: none waits."""
        for index, ticket in enumerate(self._queue):
            if ticket.owner == owner:
                return self.in_flight + index
        return None

    @property
    def queued(self) -> int:
        return len(self._queue)

    async def _wait(self, ticket: _Ticket, on_queued: OnQueued | None) -> None:
        self._queue.append(ticket)
        if on_queued is not None:
            on_queued(self.in_flight + len(self._queue) - 1)
        try:
            await ticket.ready
        except BaseException:
            if ticket in self._queue:
                self._queue.remove(ticket)
            elif ticket.ready.done() and not ticket.ready.cancelled():
                self._release()  # the place came as it was cancelled: the next one has it
            raise

    def _free(self) -> bool:
        return self.limit is None or self.in_flight < self.limit

    def _take(self) -> None:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)

    def _release(self) -> None:
        self.in_flight -= 1
        self._fill()

    def _fill(self) -> None:
        """Hand the free places to the requests waiting longest."""
        while self._queue and self._free():
            ticket = self._queue.popleft()
            if not ticket.ready.done():
                self._take()
                ticket.ready.set_result(None)


class ModelGates:
    """One gate per provider profile (the pool's key), made on first use."""

    def __init__(self) -> None:
        self._gates: dict[object, ModelGate] = {}

    def gate(self, key: object, label: str, limit: int | None) -> ModelGate:
        gate = self._gates.get(key)
        if gate is None:
            gate = self._gates[key] = ModelGate(label, limit)
        elif gate.limit != limit:
            gate.set_limit(limit)
        return gate

    def queued(self, owner: str) -> JSONObject | None:
        """`{model, ahead}` when a request of `owner` waits at a gate; None otherwise."""
        for gate in self._gates.values():
            ahead = gate.waiting(owner)
            if ahead is not None:
                return {"model": gate.label, "ahead": ahead, "limit": gate.limit}
        return None


class GatedModel:
    """A `Model` whose every request passes `gate` first."""

    def __init__(
        self,
        inner: Model,
        gate: ModelGate,
        owner: str | None = None,
        on_queued: OnQueued | None = None,
    ) -> None:
        self.inner = inner
        self._gate = gate
        self._owner = owner
        self._on_queued = on_queued

    @property
    def label(self) -> str:
        return self.inner.label

    async def complete(self, payload: JSONObject, sink: StreamSink) -> ModelReply:
        async with self._gate.slot(self._owner, self._on_queued):
            return await self.inner.complete(payload, sink)


def queue_notice(events: EventSink, name: str) -> OnQueued:
    """Tell a session's clients that its request waits for the model, and behind how many."""

    def told(ahead: int) -> None:
        message = f"waiting for the model ({name}): {ahead} ahead"
        events.emit(EventKind.NOTICE, {"message": message, "kind": "model_queue", "ahead": ahead})

    return told
