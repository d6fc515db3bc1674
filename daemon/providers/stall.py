"""Silent servers: the first-byte and idle limits of one request, and the wait notices.

A `StallWatch` keeps one asyncio deadline per request. The first byte of the
answer's body must come within `first_byte` seconds of sending the request;
each later piece within `idle` seconds of the one before. A server that
accepts and then says nothing fails with a `ModelTimeout` naming the limit
and the setting that raises it, instead of hanging for the length of a read
timeout on every attempt. No total limit: an answer that keeps coming runs
as long as it needs.

While no byte has come, a sink that is a `WaitListener` is told every few
seconds how long the request has waited (`waiting(seconds, done=False)`),
and once more with `done=True` when the answer starts, if it was told at all;
the daemon turns these into `model.waiting` events.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Protocol, runtime_checkable

from coding_harness.daemon.agent.model_errors import ModelTimeout
from coding_harness.daemon.config.profiles import ProviderProfile

# How often a waiting request is reported; more often under a small first-byte limit.
WAIT_EVERY = 5.0
MIN_WAIT_EVERY = 0.05


@runtime_checkable
class WaitListener(Protocol):
    """A sink that wants to know how long the model has kept it waiting."""

    def waiting(self, seconds: float, done: bool) -> None: ...


def wait_interval(first_byte: float) -> float:
    """Seconds between two wait reports: WAIT_EVERY, or a quarter of a small limit."""
    return max(MIN_WAIT_EVERY, min(WAIT_EVERY, first_byte / 4))


class StallWatch:
    """The limits of one request; `arrived()` is called for each piece of the body."""

    def __init__(self, profile: ProviderProfile, listener: object = None) -> None:
        self._profile = profile
        self._limits = profile.timeouts
        self._listener = listener if isinstance(listener, WaitListener) else None
        self._timer: asyncio.Timeout | None = None
        self._ticker: asyncio.Task[None] | None = None
        self._started = 0.0
        self._reported = False
        self.answering = False
        # Sees each piece of the body too (`exchanges.Exchange.piece`, under --debug).
        self.tap: Callable[[bytes], None] | None = None

    @contextlib.asynccontextmanager
    async def guard(self) -> AsyncIterator[StallWatch]:
        """The request runs inside this; a limit passed raises `ModelTimeout`."""
        loop = asyncio.get_running_loop()
        self._started = loop.time()
        if self._listener is not None:
            self._ticker = asyncio.create_task(self._tick(self._listener))
        timer = asyncio.timeout(self._limits.first_byte)
        try:
            async with timer:
                self._timer = timer
                yield self
        except TimeoutError:
            if not timer.expired():
                raise
            raise self._stalled() from None
        finally:
            await self._end_ticker()

    def arrived(self, piece: bytes = b"") -> None:
        """A piece of the body came: the next one has `idle` seconds."""
        if self.tap is not None:
            self.tap(piece)
        if self._timer is None:
            return
        loop = asyncio.get_running_loop()
        if not self.answering:
            self.answering = True
            self._stop_ticker()
            if self._reported and self._listener is not None:
                self._listener.waiting(loop.time() - self._started, True)
        self._timer.reschedule(loop.time() + self._limits.idle)

    def done(self) -> None:
        """The answer is complete: what follows it is not timed here."""
        if self._timer is not None:
            self._timer.reschedule(None)

    def _stalled(self) -> ModelTimeout:
        endpoint, name = self._profile.endpoint, self._profile.name
        if self.answering:
            limit, key = self._limits.idle, "idle"
            what = f"the model server at {endpoint} went silent in the middle of the answer"
        else:
            limit, key = self._limits.first_byte, "first_byte"
            what = f"no answer from the model server at {endpoint}"
        return ModelTimeout(
            f"{what} (nothing for {limit:g} s); if it is only slow, raise"
            f" providers.{name}.timeouts.{key}",
            endpoint=endpoint,
        )

    async def _tick(self, listener: WaitListener) -> None:
        every = wait_interval(self._limits.first_byte)
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(every)
            self._reported = True
            listener.waiting(loop.time() - self._started, False)

    def _stop_ticker(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()

    async def _end_ticker(self) -> None:
        ticker, self._ticker = self._ticker, None
        if ticker is None:
            return
        ticker.cancel()
        await asyncio.wait({ticker})
        if not ticker.cancelled():
            ticker.exception()  # a listener that failed must not be reported as unretrieved
