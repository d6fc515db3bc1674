"""Waiting on a condition instead of sleeping a fixed time.

`wait_for` polls `condition` in a thread (a process, a file, another thread);
`until` polls it inside a running event loop, yielding to the loop between
looks. Both return as soon as the condition holds (`wait_for` returns its
value) and raise `AssertionError` naming `what` after `within` seconds.
`lines_waiting` counts the messages a socket that reads nothing has been sent,
without reading them.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

TIMEOUT = 30.0  # generous: it only matters when the condition never comes


def wait_for(
    condition: Callable[[], T], what: str, within: float = TIMEOUT, every: float = 0.02
) -> T:
    """Block until `condition()` is true; its value."""
    deadline = time.monotonic() + within
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {within} s waiting for {what}")
        time.sleep(every)
    return value


async def until(
    condition: Callable[[], object], what: str, within: float = TIMEOUT, every: float = 0.005
) -> None:
    """Yield to the event loop until `condition()` is true."""
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {within} s waiting for {what}")
        await asyncio.sleep(every)


def lines_waiting(sock: socket.socket) -> int:
    """How many whole lines wait unread on `sock` (peeked, so they stay unread)."""
    try:
        waiting = sock.recv(1 << 20, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except BlockingIOError:
        return 0
    return waiting.count(b"\n")
