"""The `openai` provider type: chat completions streamed as server-sent events.

One POST with `"stream": true` and usage requested; the SSE body goes through
`SSEDecoder` into `ReplyAssembler` until `data: [DONE]`. There is no total time
limit: a stream that keeps sending runs as long as it needs; the profile's
`timeouts` bound the wait for its first byte and the silence between two
pieces (`stall.py`), and `bodies.py` caps what is read. A stream that stops before `[DONE]` and
before any finish_reason is a `ModelStreamCut`, never a quietly partial reply; one
that stops before its first event is a `ModelStreamEmpty` (`stream_fallback.py`).
After `[DONE]` the rest of the body (its end, over HTTP/1.1 the last chunk) is
read too: a response left unread closes its connection, and the next call
would pay for a new TCP and TLS handshake.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx

from coding_harness.daemon.agent.model_errors import (
    ModelBadResponse,
    ModelStreamCut,
    ModelStreamEmpty,
)
from coding_harness.daemon.agent.seams import JSONObject, ModelReply, StreamSink
from coding_harness.daemon.providers.answer_errors import error_in_answer
from coding_harness.daemon.providers.bodies import (
    EVENT_LIMIT,
    STREAMED_ANSWER_LIMIT,
    read_error_body,
    read_whole_answer,
    size_text,
    too_large,
)
from coding_harness.daemon.providers.chunks import ReplyAssembler, reply_from_completion
from coding_harness.daemon.providers.errors import error_from_response
from coding_harness.daemon.providers.profile_model import ProfileModel, watch_response
from coding_harness.daemon.providers.sse import SSEDecoder, SSEEvent, SSEEventTooLarge
from coding_harness.daemon.providers.stall import StallWatch
from coding_harness.daemon.providers.transport_errors import translate_httpx_error
from coding_harness.daemon.providers.wire import wire_payload

log = logging.getLogger(__name__)

# No read limit here: `StallWatch` times the first byte and the gaps (profile `timeouts`).
STREAM_TIMEOUT = httpx.Timeout(connect=30.0, read=None, write=60.0, pool=30.0)
DONE = "[DONE]"
HTTP_ERRORS = (httpx.HTTPError, httpx.InvalidURL)
# After `[DONE]`: how long, and how many bytes, to read for the end of the body.
DRAIN_SECONDS = 2.0
DRAIN_LIMIT = 64 * 1024


def request_headers(api_key: str | None, accept: str) -> dict[str, str]:
    """Headers for a provider request; Authorization only when there is a key."""
    headers = {"Accept": accept}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


class OpenAIStreamingModel(ProfileModel):
    """A `Model` that streams from an OpenAI-compatible /chat/completions endpoint."""

    async def complete(self, payload: JSONObject, sink: StreamSink) -> ModelReply:
        endpoint = self._profile.endpoint
        options = payload.get("stream_options")
        body = {
            **wire_payload(payload),
            "stream": True,
            "stream_options": {
                **(options if isinstance(options, dict) else {}),
                "include_usage": True,
            },
        }
        log.debug("POST %s (streaming, model %s)", endpoint, payload.get("model"))
        headers = request_headers(self._api_key, "text/event-stream")
        try:
            async with (
                self._recorded(headers, body) as exchange,
                StallWatch(self._profile, sink).guard() as watch,
                self._borrow() as client,
                client.stream(
                    "POST", endpoint, json=body, headers=headers, timeout=STREAM_TIMEOUT
                ) as response,
            ):
                watch_response(exchange, watch, response)
                return await self._read(response, sink, watch)
        except HTTP_ERRORS as exc:
            raise translate_httpx_error(exc, endpoint, STREAM_TIMEOUT) from exc

    async def _read(
        self, response: httpx.Response, sink: StreamSink, watch: StallWatch
    ) -> ModelReply:
        endpoint = self._profile.endpoint
        if not response.is_success:
            text = await read_error_body(response, watch)
            raise error_from_response(response.status_code, text, response.headers, self._profile)
        if _is_json(response):
            # A server that ignored `stream: true` and answered with one JSON body.
            text = await read_whole_answer(response, watch, endpoint)
            reply = reply_from_completion(parse_json(text, endpoint, "body"), endpoint)
            replay(reply, sink)
            return reply
        return await read_event_stream(response, sink, endpoint, watch)


async def read_event_stream(
    response: httpx.Response, sink: StreamSink, endpoint: str, watch: StallWatch
) -> ModelReply:
    """Fold an SSE body into a reply; stops at `[DONE]`.

    A body that ends, or drops, before its first event is a `ModelStreamEmpty`.
    """
    decoder = SSEDecoder(EVENT_LIMIT)
    assembler = ReplyAssembler(endpoint)
    pieces = response.aiter_bytes()
    events = 0
    try:
        async for piece in pieces:
            watch.arrived(piece)
            for event in _events(decoder, piece, endpoint):
                events += 1
                if handle_event(event, assembler, sink, endpoint):
                    watch.done()
                    await drain(pieces)
                    return assembler.result()
            _check_size(assembler, endpoint)
    except HTTP_ERRORS as exc:
        if events:
            raise
        raise empty_stream(endpoint, "the connection dropped") from exc
    decoder.close()
    if assembler.finished:
        return assembler.result()
    if not events:
        raise empty_stream(endpoint, "the body ended")
    raise ModelStreamCut(
        f"the stream from {endpoint} ended before the answer was complete"
        " (no [DONE] and no finish_reason); the partial answer was discarded",
        endpoint=endpoint,
    )


def _check_size(assembler: ReplyAssembler, endpoint: str) -> None:
    if assembler.size > STREAMED_ANSWER_LIMIT:
        raise ModelBadResponse(
            f"the answer from {endpoint} grew past {size_text(STREAMED_ANSWER_LIMIT)}"
            " characters; it was not read further",
            endpoint=endpoint,
            retryable=False,
        )


def empty_stream(endpoint: str, how: str) -> ModelStreamEmpty:
    """The error for an event stream that ended before its first event."""
    return ModelStreamEmpty(
        f"the stream from {endpoint} ended before its first event ({how})",
        endpoint=endpoint,
    )


async def drain(pieces: AsyncIterator[bytes]) -> None:
    """Read what follows `[DONE]` (normally just the end of the body), so the connection
    can serve the next request; a server that keeps sending or stays open past
    DRAIN_SECONDS gets its connection closed instead. The answer is complete either way."""
    left = DRAIN_LIMIT
    try:
        async with asyncio.timeout(DRAIN_SECONDS):
            async for piece in pieces:
                left -= len(piece)
                if left < 0:
                    return
    except (TimeoutError, *HTTP_ERRORS):
        log.debug("no clean end of body after [DONE]; the connection is not reused")


def _events(decoder: SSEDecoder, piece: bytes, endpoint: str) -> list[SSEEvent]:
    try:
        return decoder.feed_bytes(piece)
    except SSEEventTooLarge:
        raise too_large(endpoint, "one server-sent event", EVENT_LIMIT) from None


def handle_event(
    event: SSEEvent, assembler: ReplyAssembler, sink: StreamSink, endpoint: str
) -> bool:
    """Apply one event to the assembler; True when it is the final `[DONE]`."""
    data = event.data.strip()
    if data == DONE:
        return True
    if event.event == "error":
        raise error_in_answer(_error_payload(data), endpoint)
    if not data:
        return False
    chunk = parse_json(data, endpoint, f"a {event.event!r} event")
    assembler.add(chunk, sink)
    return False


def _error_payload(data: str) -> Any:
    try:
        parsed = json.loads(data)
    except ValueError:
        return data or "an error event without details"
    if isinstance(parsed, dict) and parsed.get("error"):
        return parsed["error"]
    return parsed


def parse_json(text: str, endpoint: str, where: str) -> JSONObject:
    """A JSON object, or ModelBadResponse naming where it came from."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ModelBadResponse(
            f"invalid JSON from {endpoint} in {where} ({exc.msg}): {text[:120]!r}",
            endpoint=endpoint,
        ) from None
    if not isinstance(value, dict):
        raise ModelBadResponse(
            f"{endpoint} sent JSON that is not an object in {where}: {text[:120]!r}",
            endpoint=endpoint,
        )
    return value


def replay(reply: ModelReply, sink: StreamSink) -> None:
    """Show a whole reply to the sink, for servers that did not stream it."""
    if reply.reasoning:
        sink.reasoning_delta(reply.reasoning)
    if reply.content:
        sink.text_delta(reply.content)


def _is_json(response: httpx.Response) -> bool:
    kind = str(response.headers.get("content-type", ""))
    return kind.split(";")[0].strip().lower() == "application/json"
