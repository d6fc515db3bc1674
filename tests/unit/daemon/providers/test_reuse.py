"""Connection reuse after a streamed answer: the end of the body after `[DONE]` is read so
the connection goes back to the pool, and a server that never ends the body costs at most
a short wait, never the answer."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from coding_harness.daemon.config.profiles import ProviderProfile
from coding_harness.daemon.providers import openai_stream
from coding_harness.daemon.providers.pool import ProviderPool
from tests.support.fake_model_server import FakeModelServer, Reply
from tests.support.sinks import RecordingSink

CLOUD = "https://x.example/v1"
PAYLOAD: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
ANSWER = (
    b'data: {"choices": [{"index": 0, "delta": {"content": "whole"}, "finish_reason": "stop"}]}'
    b"\n\ndata: [DONE]\n\n"
)


def calls(server: FakeModelServer, kind: str, count: int) -> list[str]:
    kind_ = "mlx" if kind == "mlx" else "openai"
    profile = ProviderProfile(name="f", type=kind_, endpoint=server.endpoint, model="m")

    async def go() -> list[str]:
        pool = ProviderPool()
        model = pool.model_for(profile, None)
        try:
            return [(await model.complete(PAYLOAD, RecordingSink())).content for _ in range(count)]
        finally:
            await pool.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("kind", ["openai", "mlx"])
def test_calls_of_a_session_share_one_connection(kind: str) -> None:
    with FakeModelServer([Reply(content=f"answer {n}") for n in range(4)]) as server:
        assert calls(server, kind, 4) == [f"answer {n}" for n in range(4)]
    assert server.connections == 1


class AfterDone(httpx.AsyncByteStream):
    """An answer, then whatever the test wants after `[DONE]`; counts pieces read."""

    def __init__(self, tail: str) -> None:
        self.tail = tail
        self.read = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield ANSWER
        if self.tail == "hang":
            await asyncio.sleep(3600)
        elif self.tail == "flood":
            for _ in range(10_000):
                self.read += 1
                yield b": keep-alive padding " * 100 + b"\n"
        elif self.tail == "reset":
            raise httpx.ReadError("connection reset by peer")


def complete_with(tail: str) -> tuple[str, float, AfterDone]:
    body = AfterDone(tail)

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=body)

    async def go() -> str:
        pool = ProviderPool(transport=httpx.MockTransport(answer))
        profile = ProviderProfile(name="c", type="openai", endpoint=CLOUD, model="m")
        try:
            return (await pool.model_for(profile, None).complete(PAYLOAD, RecordingSink())).content
        finally:
            await pool.aclose()

    start = time.monotonic()
    content = asyncio.run(go())
    return content, time.monotonic() - start, body


def test_a_body_that_never_ends_after_done_costs_a_short_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(openai_stream, "DRAIN_SECONDS", 0.05)
    content, took, _ = complete_with("hang")
    assert content == "whole"
    assert took < 2


def test_a_flood_after_done_is_not_read_to_its_end() -> None:
    content, _, body = complete_with("flood")
    assert content == "whole"
    assert 0 < body.read < 100  # stopped after DRAIN_LIMIT bytes (~2 KiB a piece)


def test_a_reset_after_done_keeps_the_answer() -> None:
    content, _, _ = complete_with("reset")
    assert content == "whole"
