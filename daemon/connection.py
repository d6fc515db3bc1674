"""One client connection: who it is, what it attached to, what waits to be sent.

Outgoing messages go through a bounded queue drained by one writer task, so a
client that stops reading is cut off ("too far behind") instead of slowing the
daemon or the other clients.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from coding_harness.protocol.framing import encode

log = logging.getLogger(__name__)

DEFAULT_QUEUE_LIMIT = 10_000
_ids = itertools.count(1)


class Connection:
    def __init__(
        self,
        writer: asyncio.StreamWriter,
        *,
        peer_pid: int | None,
        queue_limit: int = DEFAULT_QUEUE_LIMIT,
    ) -> None:
        self.id = f"c{next(_ids)}"
        self.peer_pid = peer_pid
        self.initialized = False
        self.client_name = "unknown"
        self.can_approve = False
        self.is_tool_descendant = False
        self.attached: set[str] = set()
        self._after_response: list[Callable[[], None]] = []
        self._answers: set[asyncio.Task[None]] = set()
        self._writer = writer
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue(queue_limit)
        self._writer_task = asyncio.create_task(self._drain(), name=f"writer-{self.id}")
        self.closed = asyncio.Event()

    @property
    def label(self) -> str:
        return f"{self.id}({self.client_name}, pid {self.peer_pid})"

    def send(self, message: Any) -> None:
        """Queue a message; a client that fell too far behind is disconnected."""
        self.send_encoded(encode_safely(message))

    def send_encoded(self, data: bytes) -> None:
        """Queue an already framed message (an event encoded once for every client)."""
        if self.closed.is_set():
            return
        try:
            self._queue.put_nowait(data)
        except asyncio.QueueFull:
            log.warning("%s is too far behind; disconnecting it", self.label)
            self.close(abort=True)

    def answer_later(self, answer: Awaitable[Any]) -> None:
        """Send `answer`'s response when it is ready; the connection reads on meanwhile."""

        async def send_when_ready() -> None:
            response = await answer
            if response is not None:
                self.send(response)

        task = asyncio.create_task(send_when_ready(), name=f"answer-{self.id}")
        self._answers.add(task)
        task.add_done_callback(self._answers.discard)

    def after_response(self, action: Callable[[], None]) -> None:
        """Run `action` once the response to the current request is queued."""
        self._after_response.append(action)

    def run_after_response(self) -> None:
        actions, self._after_response = self._after_response, []
        for action in actions:
            action()

    def close(self, *, abort: bool = False) -> None:
        """Close; `abort` drops unsent data, for a peer that stopped reading."""
        if self.closed.is_set():
            return
        self.closed.set()
        self._writer_task.cancel()
        if abort:
            self._writer.transport.abort()
        else:
            self._writer.close()

    async def finish(self) -> None:
        """Flush what is queued, then close."""
        if not self.closed.is_set():
            await self._queue.put(None)
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self._writer_task), timeout=2)
        self.close()

    async def _drain(self) -> None:
        try:
            while True:
                data = await self._queue.get()
                if data is None:
                    return
                self._writer.write(data)
                await self._writer.drain()
        except (ConnectionError, OSError):
            self.closed.set()


def encode_safely(message: Any) -> bytes:
    """Encode, escaping lone surrogates a client may have sent us."""
    try:
        return encode(message)
    except UnicodeEncodeError:
        import json

        return json.dumps(message, separators=(",", ":")).encode("ascii") + b"\n"
