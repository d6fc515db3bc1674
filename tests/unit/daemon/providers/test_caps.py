"""How much of a provider's body is read (issue 10 item 8, the provider part).

A 50 MB answer sent whole, a 50 MB error body, an event that never ends a
line and a streamed answer past its cap: each is read only up to its cap and
reported in one line. The bodies are generated lazily, and each test counts
how much of one was actually taken.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from coding_harness.daemon.agent.model_errors import ModelBadResponse, ModelError, ModelServerError
from coding_harness.daemon.agent.seams import ModelReply
from coding_harness.daemon.config.profiles import ProviderProfile
from coding_harness.daemon.providers import openai_stream
from coding_harness.daemon.providers.bodies import ERROR_BODY_LIMIT, WHOLE_ANSWER_LIMIT
from coding_harness.daemon.providers.local_model import LocalModel
from coding_harness.daemon.providers.openai_stream import OpenAIStreamingModel
from coding_harness.daemon.providers.sse import SSEDecoder, SSEEventTooLarge
from tests.support.sinks import RecordingSink

ENDPOINT = "https://api.example.com/v1/chat/completions"
PAYLOAD: dict[str, Any] = {"model": "m-1", "messages": [{"role": "user", "content": "hi"}]}
FIFTY_MB = 50_000_000
PIECE = 64 * 1024


class Huge(httpx.AsyncByteStream):
    """`head`, then filler up to `size` bytes in 64 KiB pieces; counts what was taken."""

    def __init__(self, head: bytes, size: int, filler: bytes = b"x") -> None:
        self.head, self.size, self.filler = head, size, filler
        self.taken = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        self.taken = len(self.head)
        yield self.head
        block = self.filler * (PIECE // len(self.filler))
        while self.taken < self.size:
            self.taken += len(block)
            yield block


def send(response: httpx.Response, kind: str = "openai") -> ModelReply:
    async def go() -> ModelReply:
        transport = httpx.MockTransport(lambda _: response)
        async with httpx.AsyncClient(transport=transport) as client:
            profile = ProviderProfile(
                name="p", type="mlx" if kind == "mlx" else "openai", endpoint=ENDPOINT, model="m"
            )
            model = (LocalModel if kind == "mlx" else OpenAIStreamingModel)(profile, client, None)
            return await model.complete(dict(PAYLOAD), RecordingSink())

    return asyncio.run(go())


def failure(response: httpx.Response, kind: str = "openai") -> ModelError:
    with pytest.raises(ModelError) as caught:
        send(response, kind)
    return caught.value


@pytest.mark.parametrize("kind", ["openai", "mlx"])
def test_a_50_mb_answer_sent_whole_is_refused_after_16_mib(kind: str) -> None:
    body = Huge(b'{"choices": [{"index": 0, "message": {"content": "', FIFTY_MB)
    json_type = {"content-type": "application/json"}
    error = failure(httpx.Response(200, headers=json_type, stream=body), kind)
    assert isinstance(error, ModelBadResponse) and not error.retryable
    assert f"the answer from {ENDPOINT} is larger than 16 MiB" in error.message
    assert body.taken <= WHOLE_ANSWER_LIMIT + PIECE


def test_a_declared_length_over_the_cap_is_refused_before_reading() -> None:
    body = Huge(b"{", FIFTY_MB)
    headers = {"content-type": "application/json", "content-length": str(FIFTY_MB)}
    error = failure(httpx.Response(200, headers=headers, stream=body), "mlx")
    assert "larger than 16 MiB" in error.message
    assert body.taken == 0


@pytest.mark.parametrize("kind", ["openai", "mlx"])
def test_a_50_mb_error_body_is_read_up_to_64_kib(kind: str) -> None:
    body = Huge(b'{"error": {"message": "overloaded ', FIFTY_MB)
    error = failure(httpx.Response(503, stream=body), kind)
    assert isinstance(error, ModelServerError) and error.status == 503
    assert "HTTP 503" in error.message and len(error.message) < 500
    assert body.taken <= ERROR_BODY_LIMIT + PIECE


def test_an_event_that_never_ends_is_refused_after_4_mib() -> None:
    body = Huge(b'data: {"choices": [{"delta": {"content": "', FIFTY_MB)
    events = {"content-type": "text/event-stream"}
    error = failure(httpx.Response(200, headers=events, stream=body))
    assert isinstance(error, ModelBadResponse) and not error.retryable
    assert "one server-sent event" in error.message and "larger than 4 MiB" in error.message
    assert body.taken <= 4 * 1024 * 1024 + PIECE


def test_a_streamed_answer_past_its_cap_is_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(openai_stream, "STREAMED_ANSWER_LIMIT", 10_000)
    chunk = {"choices": [{"index": 0, "delta": {"content": "y" * 1000}}]}
    line = f"data: {json.dumps(chunk)}\n\n".encode()
    body = Huge(line, FIFTY_MB, filler=line)
    events = {"content-type": "text/event-stream"}
    error = failure(httpx.Response(200, headers=events, stream=body))
    assert isinstance(error, ModelBadResponse) and not error.retryable
    assert "grew past" in error.message
    assert body.taken < 1_000_000


def test_the_decoder_limit_counts_one_event_at_a_time() -> None:
    decoder = SSEDecoder(limit=20)
    for _ in range(100):  # many small events: far more than 20 characters in all
        assert [e.data for e in decoder.feed("data: 0123456789\n\n")] == ["0123456789"]
    decoder.feed("data: 0123456789ab\n")
    with pytest.raises(SSEEventTooLarge):
        decoder.feed("data: 0123456789ab\n")  # the second line of the same event
    unended = SSEDecoder(limit=20)
    unended.feed("data: 01234567")
    with pytest.raises(SSEEventTooLarge):
        unended.feed("89abcdefghij")
