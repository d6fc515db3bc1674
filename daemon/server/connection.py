"""One client connection: who it is, what it attached to, what waits to be sent.

Outgoing messages go straight to the socket while nothing waits; otherwise
they wait in a queue drained by one writer task, bounded in count and in
bytes (`QueueLimits`). Past the busy bound the connection is
`overloaded`: the JSON-RPC core answers its new requests with a retryable
"server overloaded" error instead of running them. Past the hard bound the
client is cut off ("too far behind"); it can attach again with `since_seq`
and lose nothing. Replay waits for `room` between pages. Closing drops what
still waits, so a client that leaves takes its backlog with it.

The daemon may also ask a client something (`ask`, for a client that announced
the capability): the request goes through the same queue, and the client's
response, routed back by the socket server (`answer`), settles it. Whatever
still waits for an answer fails at once when the connection closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from coding_harness.daemon.server.asks import AskFailed, JSONObject, PendingAsks
from coding_harness.daemon.server.outgoing import MIB, fit_response
from coding_harness.protocol.framing import MAX_MESSAGE_BYTES

log = logging.getLogger(__name__)

_ids = itertools.count(1)


@dataclass(frozen=True, kw_only=True, slots=True)
class QueueLimits:
    """Bounds on what waits to be sent to one client."""

    max_messages: int = 10_000  # past either: cut off as too far behind
    max_bytes: int = 32 * MIB
    busy_messages: int = 2_000  # past either: new requests are refused as overloaded
    busy_bytes: int = 8 * MIB
    room_messages: int = 500  # under both: a replay sends its next page
    room_bytes: int = 1 * MIB


class Connection:
    def __init__(
        self,
        writer: asyncio.StreamWriter,
        *,
        peer_pid: int | None,
        limits: QueueLimits | None = None,
        max_message: int = MAX_MESSAGE_BYTES,
    ) -> None:
        self.id = f"c{next(_ids)}"
        self.peer_pid = peer_pid
        self.initialized = False
        self.client_name = "unknown"
        self.can_approve = False
        self.answers_others = False  # answers every turn's approvals, not only its own
        self.reads_buffers = False  # announced `capabilities.read_text_file`
        self.writes_buffers = False  # announced `capabilities.write_text_file` too
        self.is_tool_descendant = False
        self.attached: set[str] = set()
        self.limits = limits or QueueLimits()
        self.max_message = max_message
        self._on_answer: list[Callable[[], None]] = []
        self._answers: set[asyncio.Task[None]] = set()
        self._asks = PendingAsks()
        self._writer = writer
        self._queue: deque[bytes] = deque()
        self._queued_bytes = 0
        self._ready = asyncio.Event()
        self._room = asyncio.Event()
        self._room.set()
        self._finishing = False
        self.closed = asyncio.Event()
        self._writer_task = asyncio.create_task(self._drain(), name=f"writer-{self.id}")

    @property
    def label(self) -> str:
        return f"{self.id}({self.client_name}, pid {self.peer_pid})"

    @property
    def queued(self) -> tuple[int, int]:
        """(messages, bytes) waiting to be written."""
        return len(self._queue), self._queued_bytes

    @property
    def overloaded(self) -> bool:
        """So many answers and events wait unread that new requests are refused for now."""
        limits = self.limits
        return len(self._queue) > limits.busy_messages or self._queued_bytes > limits.busy_bytes

    def send(self, message: Any) -> None:
        """Queue a message; an answer over the size limit becomes an error saying so."""
        data = fit_response(message, self.max_message)
        if data is not None:
            self.send_encoded(data)

    def send_encoded(self, data: bytes) -> None:
        """Queue an already framed message; a client that fell too far behind is cut off."""
        if self.closed.is_set():
            return
        limits = self.limits
        if (
            len(self._queue) >= limits.max_messages
            or self._queued_bytes + len(data) > limits.max_bytes
        ):
            log.warning(
                "%s is too far behind (%d messages, %d bytes unread); disconnecting it",
                self.label,
                len(self._queue),
                self._queued_bytes,
            )
            self.close(abort=True)
            return
        transport = self._writer.transport
        if transport.is_closing():  # the peer went away: as a failed write would say
            self._broke()
            return
        if not self._queue and not transport.get_write_buffer_size():
            # Nothing waits and the socket took all before: straight over, so an answer
            # or event is on its way before the sender's next step (a queued one waits
            # for the writer task, which runs only when the sender yields).
            transport.write(data)
            return
        self._queue.append(data)
        self._queued_bytes += len(data)
        self._ready.set()
        if not self._has_room():
            self._room.clear()

    async def wait_for_room(self) -> bool:
        """Wait until little is left to write; False once the connection is closed."""
        await self._room.wait()
        return not self.closed.is_set()

    def answer_later(self, answer: Awaitable[Any]) -> None:
        """Send `answer`'s response when it is ready; the connection reads on meanwhile."""

        async def send_when_ready() -> None:
            response = await answer
            if response is not None:
                self.send(response)

        task = asyncio.create_task(send_when_ready(), name=f"answer-{self.id}")
        self._answers.add(task)
        task.add_done_callback(self._answers.discard)

    @property
    def asking(self) -> bool:
        """Whether the daemon waits for an answer from this client."""
        return bool(self._asks)

    async def ask(self, method: str, params: JSONObject, timeout: float) -> Any:  # noqa: ASYNC109
        """Send the client a request and return its result; `AskFailed` when it answers
        an error, does not answer within `timeout` seconds, or the connection closes."""
        if self.closed.is_set():
            raise AskFailed(f"{self.label} is closed")
        ask_id, answered = self._asks.open()
        try:
            self.send({"jsonrpc": "2.0", "id": ask_id, "method": method, "params": params})
            if self.closed.is_set():  # the send cut off a client too far behind
                raise AskFailed(f"{self.label} closed before it was asked")
            return await asyncio.wait_for(answered, timeout)
        except TimeoutError:
            raise AskFailed(f"{self.label} did not answer {method} within {timeout:g} s") from None
        finally:
            self._asks.forget(ask_id)

    def answer(self, response: JSONObject) -> bool:
        """Settle the ask a client's `response` answers; False when none waits for it."""
        return self._asks.resolve(response)

    def on_answer(self, action: Callable[[], None]) -> None:
        """Run `action` once the answer to the current request is decided, just before it
        is written, in the same step: what it does synchronously (a stop withdraws the
        discovery record) precedes the answer, and what it wakes (a submitted turn)
        runs at a later step of the loop, after the answer is out."""
        self._on_answer.append(action)

    def run_on_answer(self) -> None:
        actions, self._on_answer = self._on_answer, []
        for action in actions:
            action()

    def close(self, *, abort: bool = False) -> None:
        """Close and drop whatever waits; `abort` drops unsent data, for a peer that
        stopped reading."""
        if self.closed.is_set():
            return
        self.closed.set()
        self._room.set()  # wakes a waiting replay, which sees the connection closed
        self._asks.fail_all(f"{self.label} closed before it answered")
        self._writer_task.cancel()
        self._forget_queue()
        if abort:
            self._writer.transport.abort()
        else:
            self._writer.close()

    async def finish(self) -> None:
        """Flush what is queued (for up to 2 s), then close."""
        if not self.closed.is_set():
            self._finishing = True
            self._ready.set()
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self._writer_task), timeout=2)
        self.close()

    def _has_room(self) -> bool:
        limits = self.limits
        return len(self._queue) <= limits.room_messages and self._queued_bytes <= limits.room_bytes

    def _forget_queue(self) -> None:
        self._queue.clear()
        self._queued_bytes = 0

    async def _drain(self) -> None:
        try:
            while True:
                if not self._queue:
                    if self._finishing:
                        return
                    self._ready.clear()
                    await self._ready.wait()
                    continue
                data = self._queue.popleft()
                self._queued_bytes -= len(data)
                if self._has_room():
                    self._room.set()
                self._writer.write(data)
                await self._writer.drain()
        except (ConnectionError, OSError):
            self._broke()

    def _broke(self) -> None:
        self.closed.set()
        self._room.set()
        self._forget_queue()
        self._asks.fail_all(f"{self.label} broke off before it answered")
