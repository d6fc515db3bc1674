"""Work a turn starts early and awaits later, cancelled if the turn never gets to it.

A turn hands its blocking reads (the system prompt's files, the build files,
the code index) to worker threads and its index refresh to a task while it is
assembled, and awaits each where it needs the answer (`drive.py`).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

_T = TypeVar("_T")


class Background:
    """Work a turn starts early and awaits later; whatever is left unawaited when the
    block ends (a hook refused the prompt, the turn was cancelled) is cancelled."""

    def __init__(self) -> None:
        self._tasks: list[asyncio.Future[Any]] = []

    def start(self, work: Awaitable[_T]) -> asyncio.Future[_T]:
        """`work` as a task (it takes its first step when the turn next waits)."""
        task = asyncio.ensure_future(work)
        self._tasks.append(task)
        return task

    def thread(self, func: Callable[..., _T], *args: Any) -> asyncio.Future[_T]:
        """`func(*args)` in a worker thread, handed over now (`asyncio.to_thread` would
        wait for the turn's next pause to start)."""
        call = functools.partial(contextvars.copy_context().run, func, *args)
        return self.start(asyncio.get_running_loop().run_in_executor(None, call))

    def __enter__(self) -> Background:
        return self

    def __exit__(self, *exc: object) -> None:
        for task in self._tasks:
            if not task.done():
                task.cancel()
            elif not task.cancelled():
                task.exception()  # retrieved: an unawaited failure is not logged as lost
