"""A Streamable HTTP server's answers, read no further than one MCP message may go.

The SDK reads a JSON answer whole (`response.aread()`) and an event stream one
event at a time; a server answering with an endless body would fill the daemon.
`capped_http_client` is the `httpx2.AsyncClient` the SDK is given: a response
hook puts each response body behind `CappedStream`, which counts the bytes of a
JSON body, and of each server-sent event of a stream, and past
`MAX_MESSAGE_BYTES` records the breach on the link's `MessageCap` and raises,
which the SDK turns into a failed request. The answer is asked for
uncompressed, and a compressed one is not inflated (the cap counts what is
read): it fails to parse. Proxies and the rest of the client are httpx2's own.

A JSON answer past `offload.CONDENSE_ABOVE` is not handed to the SDK as it
came: `CondensingStream` gives it to the condensing child with the request it
answers (read from the request's body), and the SDK parses what the child made
of it. The SDK's own log record of a capped answer (a traceback) is dropped:
the link says it in one line.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx2

from coding_harness.daemon.mcp.limits import MessageCap
from coding_harness.daemon.mcp.offload import CONDENSE_ABOVE, CondenseFailed, Condenser

# The SDK's own client defaults: 30 s to connect or send, 5 minutes between the
# reads of an answer (an event stream may be quiet that long).
CONNECT_TIMEOUT = 30.0
READ_TIMEOUT = 300.0
_EVENT_ENDS = (b"\n\n", b"\r\r", b"\r\n\r\n")


class BodyTooLarge(httpx2.StreamError):
    """An answer over the cap (a `StreamError`: the SDK fails the request with it)."""


def capped_http_client(
    headers: Mapping[str, str], cap: MessageCap, condenser: Condenser
) -> httpx2.AsyncClient:
    logging.getLogger(SDK_LOGGER).addFilter(QUIET_CAP)

    async def cap_body(response: httpx2.Response) -> None:
        event_stream = response.headers.get("content-type", "").startswith("text/event-stream")
        response.headers.pop("content-encoding", None)  # read as sent: the cap counts it
        assert isinstance(response.stream, httpx2.AsyncByteStream)  # an async client's
        stream: httpx2.AsyncByteStream = CappedStream(response.stream, cap, events=event_stream)
        if not event_stream:
            response.headers.pop("content-length", None)  # a condensed answer is shorter
            stream = CondensingStream(stream, condenser, _request_of(response.request))
        response.stream = stream

    return httpx2.AsyncClient(
        headers={**headers, "Accept-Encoding": "identity"},
        timeout=httpx2.Timeout(CONNECT_TIMEOUT, read=READ_TIMEOUT),
        event_hooks={"response": [cap_body]},
    )


class CappedStream(httpx2.AsyncByteStream):
    """`inner`'s bytes, until a JSON body (or one event of an event stream) passes the cap."""

    def __init__(self, inner: httpx2.AsyncByteStream, cap: MessageCap, *, events: bool) -> None:
        self._inner = inner
        self._cap = cap
        self._events = events
        self._since = 0  # bytes of the body, or of the event not yet ended
        self._tail = b""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._count(chunk)
            yield chunk

    def _count(self, chunk: bytes) -> None:
        if self._events:
            seen = self._tail + chunk
            ended = max(
                (seen.rfind(end) + len(end) for end in _EVENT_ENDS if end in seen), default=0
            )
            self._since = len(seen) - ended if ended else self._since + len(chunk)
            self._tail = seen[-3:]
        else:
            self._since += len(chunk)
        if self._since > self._cap.limit:
            what = "one server-sent event" if self._events else "an answer"
            raise BodyTooLarge(str(self._cap.exceeded(what)))

    async def aclose(self) -> None:
        await self._inner.aclose()


SDK_LOGGER = "mcp.client.streamable_http"


class _QuietCap(logging.Filter):
    """Drops the SDK's record (with its traceback) of an answer our cap stopped."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], BodyTooLarge))


QUIET_CAP = _QuietCap()


class CondensingStream(httpx2.AsyncByteStream):
    """A JSON answer as it came when small; past `CONDENSE_ABOVE`, what the condensing
    child made of it (`request` is the `(id, method)` it answers)."""

    def __init__(
        self, inner: httpx2.AsyncByteStream, condenser: Condenser, request: tuple[Any, str] | None
    ) -> None:
        self._inner = inner
        self._condenser = condenser
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        body = bytearray()
        async for chunk in self._inner:
            body += chunk  # at most the cap: `inner` is a `CappedStream`
        if len(body) <= CONDENSE_ABOVE:
            self._condenser.parsed_here(len(body))
            yield bytes(body)
            return
        methods = dict([self._request]) if self._request is not None else {}
        try:
            condensed = await self._condenser.condense(bytes(body), methods)
        except CondenseFailed as exc:
            raise BodyTooLarge(str(exc)) from None
        self._condenser.parsed_here(len(condensed))
        yield condensed or _error(self._request, "the server's answer was not one it may send")

    async def aclose(self) -> None:
        await self._inner.aclose()


def _request_of(request: httpx2.Request) -> tuple[Any, str] | None:
    """The `(id, method)` of the JSON-RPC request a POST carried, if it is one."""
    try:
        message = json.loads(request.content)
    except (httpx2.RequestNotRead, ValueError):
        return None
    if isinstance(message, dict) and isinstance(message.get("method"), str):
        ident = message.get("id")
        return (ident, message["method"]) if isinstance(ident, str | int) else None
    return None


def _error(request: tuple[Any, str] | None, text: str) -> bytes:
    ident = request[0] if request is not None else None
    error = {"code": -32603, "message": text}
    return json.dumps({"jsonrpc": "2.0", "id": ident, "error": error}).encode()
