"""Retrying a `Model`: exponential backoff with full jitter, and a notice per retry.

`RetryingModel` wraps any `Model`. A failure whose `ModelError.retryable` is
set (429, 5xx, dropped or silent connections, nothing answering) is asked
again, up to `RetrySettings.attempts` tries in all; anything else (400, 401,
403, 404, a context-length error, a spent quota) is raised at once. The wait
is the server's Retry-After when it sent one (a longer one than
`max_retry_after` is reported, not waited for), else a random time up to
`base_delay * 2**(retry - 1)`, capped at `max_delay` ("full jitter").

A connection nobody answers is retried briefly: a local server being started
gets a moment, a missing one is reported soon. A server that went silent
(`stall.py`: no first byte, or a long gap) is asked again once at most: a
second silence is reported, since each costs the whole limit. An answer that fails half-way
(a 200 whose stream is cut, or that reports an `error` event or chunk: see
`answer_errors.py`) is asked again whole as long as none of it was shown: a
tool call it was streaming is dropped with it, and no tool runs while a model
call is in flight. An answer that already showed text or reasoning to the
user is never asked again, since the user would see it twice; the error says
so, and the partial answer is not kept. Only the reply that succeeds reaches
the caller, so usage is counted once.
The wait is a plain `sleep`, so cancelling the turn stops it at once.

While a request waits for its first byte, `on_waiting(seconds, done)` is
called every few seconds (see `stall.py`); `with_retries` publishes it as a
`model.waiting {seconds, done}` event, so clients can say what they wait for.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable

from coding_harness.daemon.agent.model_errors import (
    ModelBadResponse,
    ModelError,
    ModelRateLimited,
    ModelServerError,
    ModelStreamCut,
    ModelTimeout,
    ModelUnavailable,
)
from coding_harness.daemon.agent.seams import EventSink, JSONObject, Model, ModelReply, StreamSink
from coding_harness.daemon.config.profiles import RetrySettings
from coding_harness.protocol.methods import EventKind

Notify = Callable[[str], object]
OnWaiting = Callable[[float, bool], object]
Sleep = Callable[[float], Awaitable[object]]

# Nothing answering: this many tries at most, waiting at most this long between them.
UNAVAILABLE_ATTEMPTS = 3
UNAVAILABLE_MAX_DELAY = 1.0
# A silent server: asked this many times at most.
STALL_ATTEMPTS = 2
# The event a request waiting for its first byte sends.
MODEL_WAITING = EventKind.MODEL_WAITING


class _WatchedSink:
    """Passes deltas on and remembers whether the user saw any; relays waits and notices."""

    def __init__(self, sink: StreamSink, on_waiting: OnWaiting | None, notify: Notify) -> None:
        self._sink = sink
        self._on_waiting = on_waiting
        self._notify = notify
        self.shown = False

    def waiting(self, seconds: float, done: bool) -> None:
        if self._on_waiting is not None:
            self._on_waiting(seconds, done)

    def notice(self, message: str) -> None:
        """A line for the people attached, e.g. a fallback the model chose."""
        self._notify(message)

    def text_delta(self, text: str) -> None:
        self.shown = self.shown or bool(text)
        self._sink.text_delta(text)

    def reasoning_delta(self, text: str) -> None:
        self.shown = self.shown or bool(text)
        self._sink.reasoning_delta(text)


class RetryingModel:
    """A `Model` that asks `model` again after failures worth retrying."""

    def __init__(
        self,
        model: Model,
        notify: Notify,
        *,
        settings: RetrySettings | None = None,
        sleep: Sleep = asyncio.sleep,
        rng: Callable[[], float] = random.random,
        on_waiting: OnWaiting | None = None,
    ) -> None:
        self._model = model
        self._notify = notify
        self._on_waiting = on_waiting
        self._settings = settings or RetrySettings()
        self._sleep = sleep
        self._rng = rng

    @property
    def label(self) -> str:
        return self._model.label

    async def complete(self, payload: JSONObject, sink: StreamSink) -> ModelReply:
        watched = _WatchedSink(sink, self._on_waiting, self._notify)
        attempt = 1
        while True:
            try:
                return await self._model.complete(payload, watched)
            except ModelError as exc:
                delay, limit = self._plan(exc, attempt, watched.shown)
                self._notify(notice(exc, delay, attempt + 1, limit))
            await self._sleep(delay)
            attempt += 1

    def _plan(self, exc: ModelError, attempt: int, shown: bool) -> tuple[float, int]:
        """(seconds to wait, attempts allowed) before asking again; raises `exc` if not."""
        if not exc.retryable:
            raise exc
        if shown:
            exc.amend("; part of the answer was already shown, so it was not asked again")
            raise exc
        limit = self._limit(exc)
        if attempt >= limit:
            if attempt > 1:
                exc.amend(f" (gave up after {attempt} attempts)")
            raise exc
        if exc.retry_after is not None:
            if exc.retry_after > self._settings.max_retry_after:
                exc.amend(
                    f"; the server asks to wait {exc.retry_after:g} s, longer than the"
                    f" {self._settings.max_retry_after:g} s a retry may wait: try again later"
                )
                raise exc
            return exc.retry_after, limit
        return self._rng() * self._ceiling(exc, attempt), limit

    def _limit(self, exc: ModelError) -> int:
        if isinstance(exc, ModelUnavailable):
            return min(self._settings.attempts, UNAVAILABLE_ATTEMPTS)
        if isinstance(exc, ModelTimeout):
            return min(self._settings.attempts, STALL_ATTEMPTS)
        return self._settings.attempts

    def _ceiling(self, exc: ModelError, attempt: int) -> float:
        settings = self._settings
        ceiling = min(settings.max_delay, settings.base_delay * 2.0 ** (attempt - 1))
        if isinstance(exc, ModelUnavailable):
            return min(ceiling, UNAVAILABLE_MAX_DELAY)
        return ceiling


def notice(exc: ModelError, delay: float, attempt: int, limit: int) -> str:
    """The line every attached client sees before a retry."""
    where = exc.endpoint or "the model server"
    if isinstance(exc, ModelRateLimited):
        what = f"rate limited by {where}"
    elif isinstance(exc, ModelServerError) and exc.status is not None:
        what = f"HTTP {exc.status} from {where}"
    elif isinstance(exc, ModelUnavailable):
        what = f"no model server answers at {where} yet"
    elif isinstance(exc, ModelTimeout):
        what = f"{where} went silent"
    elif isinstance(exc, ModelStreamCut):
        what = f"the answer from {where} was cut off before any of it was shown"
    elif isinstance(exc, ModelBadResponse):
        what = f"{where} reported an error before any of the answer was shown"
    else:
        what = f"the request to {where} failed"
    return f"{what}, retrying in {seconds(delay)} (attempt {attempt} of {limit})"


def seconds(delay: float) -> str:
    """A wait for people: "3 s", "0.4 s", "12 s"."""
    if delay >= 10:
        return f"{delay:.0f} s"
    return f"{delay:.2g} s"


def with_retries(model: Model, settings: RetrySettings, events: EventSink) -> RetryingModel:
    """`model` retried under `settings`, each retry announced as a `notice` event."""

    def notify(message: str) -> None:
        events.emit(EventKind.NOTICE, {"message": message})

    def on_waiting(seconds: float, done: bool) -> None:
        events.emit(MODEL_WAITING, {"seconds": round(seconds, 1), "done": done})

    return RetryingModel(model, notify, settings=settings, on_waiting=on_waiting)
