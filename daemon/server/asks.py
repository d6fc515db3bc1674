"""Requests the daemon sends to a client, and the responses that come back.

A connection's `PendingAsks` numbers each request the daemon sends (`d1`,
`d2`, ...) and keeps a future per id until the client answers, the wait times
out or the connection closes. `as_response` tells a client's response apart
from a request: the socket server hands responses here instead of to the
JSON-RPC core, since JSON-RPC forbids answering a response.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

JSONObject = dict[str, Any]


class AskFailed(Exception):
    """A request to a client got no usable answer: an error, no answer in time, or the
    connection closed."""


def as_response(raw: bytes) -> JSONObject | None:
    """The message as a JSON-RPC response object, or None when it is anything else
    (a request, a notification, a batch, malformed JSON)."""
    try:
        message = json.loads(raw)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or "method" in message:
        return None
    if message.get("jsonrpc") != "2.0" or "id" not in message:
        return None
    request_id = message["id"]
    if isinstance(request_id, bool) or not isinstance(request_id, str | int | None):
        return None
    if ("result" in message) == ("error" in message):
        return None
    return message


class PendingAsks:
    """The requests one connection waits on, by id."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._waiting: dict[str, asyncio.Future[Any]] = {}

    def __bool__(self) -> bool:
        return bool(self._waiting)

    def open(self) -> tuple[str, asyncio.Future[Any]]:
        """A fresh id and the future its answer will resolve."""
        ask_id = f"d{next(self._ids)}"
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[ask_id] = future
        return ask_id, future

    def forget(self, ask_id: str) -> None:
        self._waiting.pop(ask_id, None)

    def resolve(self, response: JSONObject) -> bool:
        """Settle the ask `response` answers; False when none waits for its id."""
        request_id = response.get("id")
        future = self._waiting.pop(request_id, None) if isinstance(request_id, str) else None
        if future is None or future.done():
            return False
        if "error" in response:
            future.set_exception(AskFailed(f"the client answered an error: {_brief(response)}"))
        else:
            future.set_result(response.get("result"))
        return True

    def fail_all(self, why: str) -> None:
        """Every waiting ask fails at once (the connection closed)."""
        waiting, self._waiting = self._waiting, {}
        for future in waiting.values():
            if not future.done():
                future.set_exception(AskFailed(why))


def _brief(response: JSONObject) -> str:
    error = response.get("error")
    if isinstance(error, dict):
        return f"{error.get('code')} {str(error.get('message'))[:200]}"
    return str(error)[:200]
