"""The `openai` provider type: chat completions streamed as server-sent events.

One POST with `"stream": true` and usage requested; the SSE body goes through
`SSEDecoder` into `ReplyAssembler` until `data: [DONE]`. There is no total time
limit: a stream that keeps sending runs as long as it needs, and only silence
longer than the idle timeout ends it. A stream that stops before `[DONE]` and
before any finish_reason is a `ModelStreamCut`, never a quietly partial reply.
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

from coding_harness.daemon.providers.answer_errors import error_in_answer
from coding_harness.daemon.providers.chunks import ReplyAssembler, reply_from_completion
from coding_harness.daemon.providers.errors import (
    ModelBadResponse,
    ModelStreamCut,
    error_from_response,
)
from coding_harness.daemon.providers.profile_model import ProfileModel
from coding_harness.daemon.providers.sse import SSEDecoder, SSEEvent
from coding_harness.daemon.providers.transport_errors import translate_httpx_error
from coding_harness.daemon.seams import JSONObject, ModelReply, StreamSink

log = logging.getLogger(__name__)

STREAM_TIMEOUT = httpx.Timeout(connect=30.0, read=300.0, write=60.0, pool=30.0)
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
            **payload,
            "stream": True,
            "stream_options": {
                **(options if isinstance(options, dict) else {}),
                "include_usage": True,
            },
        }
        log.debug("POST %s (streaming, model %s)", endpoint, payload.get("model"))
        try:
            async with (
                self._borrow() as client,
                client.stream(
                    "POST",
                    endpoint,
                    json=body,
                    headers=request_headers(self._api_key, "text/event-stream"),
                    timeout=STREAM_TIMEOUT,
                ) as response,
            ):
                return await self._read(response, sink)
        except HTTP_ERRORS as exc:
            raise translate_httpx_error(exc, endpoint, STREAM_TIMEOUT) from exc

    async def _read(self, response: httpx.Response, sink: StreamSink) -> ModelReply:
        if not response.is_success:
            text = (await response.aread()).decode("utf-8", errors="replace")
            raise error_from_response(response.status_code, text, response.headers, self._profile)
        if _is_json(response):
            return await self._read_whole(response, sink)
        return await read_event_stream(response, sink, self._profile.endpoint)

    async def _read_whole(self, response: httpx.Response, sink: StreamSink) -> ModelReply:
        """A server that ignored `stream: true` and answered with one JSON body."""
        endpoint = self._profile.endpoint
        text = (await response.aread()).decode("utf-8", errors="replace")
        reply = reply_from_completion(parse_json(text, endpoint, "body"), endpoint)
        replay(reply, sink)
        return reply


async def read_event_stream(
    response: httpx.Response, sink: StreamSink, endpoint: str
) -> ModelReply:
    """Fold an SSE body into a reply; stops at `[DONE]`."""
    decoder = SSEDecoder()
    assembler = ReplyAssembler(endpoint)
    pieces = response.aiter_bytes()
    async for piece in pieces:
        for event in decoder.feed_bytes(piece):
            if handle_event(event, assembler, sink, endpoint):
                await drain(pieces)
                return assembler.result()
    decoder.close()
    if assembler.finished:
        return assembler.result()
    raise ModelStreamCut(
        f"the stream from {endpoint} ended before the answer was complete"
        " (no [DONE] and no finish_reason); the partial answer was discarded",
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
