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
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping

import httpx2

from coding_harness.daemon.mcp.limits import MessageCap

# The SDK's own client defaults: 30 s to connect or send, 5 minutes between the
# reads of an answer (an event stream may be quiet that long).
CONNECT_TIMEOUT = 30.0
READ_TIMEOUT = 300.0
_EVENT_ENDS = (b"\n\n", b"\r\r", b"\r\n\r\n")


class BodyTooLarge(httpx2.StreamError):
    """An answer over the cap (a `StreamError`: the SDK fails the request with it)."""


def capped_http_client(headers: Mapping[str, str], cap: MessageCap) -> httpx2.AsyncClient:
    async def cap_body(response: httpx2.Response) -> None:
        event_stream = response.headers.get("content-type", "").startswith("text/event-stream")
        response.headers.pop("content-encoding", None)  # read as sent: the cap counts it
        assert isinstance(response.stream, httpx2.AsyncByteStream)  # an async client's
        response.stream = CappedStream(response.stream, cap, events=event_stream)

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
