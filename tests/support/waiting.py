"""Waiting on a condition instead of sleeping a fixed time.

`wait_for` polls `condition` in a thread (a process, a file, another thread);
`until` polls it inside a running event loop, yielding to the loop between
looks. Both return as soon as the condition holds and raise `AssertionError`
naming `what` after `within` seconds.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

TIMEOUT = 10.0


def wait_for(
    condition: Callable[[], object], what: str, within: float = TIMEOUT, every: float = 0.02
) -> None:
    """Block until `condition()` is true."""
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {within} s waiting for {what}")
        time.sleep(every)


async def until(
    condition: Callable[[], object], what: str, within: float = TIMEOUT, every: float = 0.005
) -> None:
    """Yield to the event loop until `condition()` is true."""
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {within} s waiting for {what}")
        await asyncio.sleep(every)
