"""A scripted model server behind `httpx.MockTransport`, and the providers run over it.

`Server` answers from a handler and records each request; `call`, `failing` and
`run_pool` drive the real `OpenAIStreamingModel`, `LocalModel` and
`ProviderPool` over it; `sse`, `event_stream` and `Pieces` build streamed bodies
cut at awkward byte boundaries; `fixture_text` reads a captured real answer
from ../shared/fixtures/sse (the test is skipped when it is absent).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from coding_harness.daemon.agent.model_errors import ModelError
from coding_harness.daemon.agent.seams import Model, ModelReply
from coding_harness.daemon.config.profiles import ProviderProfile
from coding_harness.daemon.providers.local_model import LocalModel
from coding_harness.daemon.providers.openai_stream import OpenAIStreamingModel
from coding_harness.daemon.providers.pool import ProviderPool
from tests.support.sinks import RecordingSink

FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "sse"
ENDPOINT = "https://api.example.com/v1/chat/completions"
LOCAL_ENDPOINT = "http://localhost:8080/v1/chat/completions"
KEY = "sk-test-0123456789"
PAYLOAD: dict[str, Any] = {
    "model": "m-1",
    "messages": [{"role": "user", "content": "hi"}],
    "tools": [{"type": "function", "function": {"name": "ls", "parameters": {}}}],
    "tool_choice": "auto",
}

Handler = Callable[[httpx.Request], httpx.Response]


class Pieces(httpx.AsyncByteStream):
    """A response body delivered in the given pieces, optionally failing after them."""

    def __init__(self, pieces: Iterable[bytes], fail: Exception | None = None) -> None:
        self._pieces = list(pieces)
        self._fail = fail

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self._pieces:
            yield piece
        if self._fail is not None:
            raise self._fail


def profile(
    kind: str = "openai", *, name: str = "cloud", endpoint: str = ENDPOINT
) -> ProviderProfile:
    return ProviderProfile(
        name=name,
        type="mlx" if kind == "mlx" else "openai",
        endpoint=endpoint,
        model="m-1",
        api_key_env="EXAMPLE_API_KEY",
        generation={"temperature": 0.2},
    )


def sse(*chunks: dict[str, Any], done: bool = True) -> bytes:
    lines = [f"data: {json.dumps(c, ensure_ascii=False)}\n\n" for c in chunks]
    if done:
        lines.append("data: [DONE]\n\n")
    return "".join(lines).encode()


def split(body: bytes, size: int) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


def event_stream(body: bytes, size: int = 7, fail: Exception | None = None) -> httpx.Response:
    return httpx.Response(
        200,
        headers={"content-type": "text/event-stream"},
        stream=Pieces(split(body, size), fail),
    )


def delta(content: str | None = None, finish: str | None = None, **more: Any) -> dict[str, Any]:
    piece: dict[str, Any] = dict(more)
    if content is not None:
        piece["content"] = content
    return {"choices": [{"index": 0, "delta": piece, "finish_reason": finish}]}


def fixture_text(name: str) -> str:
    path = FIXTURES / name
    if not path.is_file():
        pytest.skip(f"shared fixture {name} is not available at {FIXTURES}")
    return path.read_text()


@dataclass
class Server:
    """A scripted model server that records what it was sent."""

    handler: Handler
    requests: list[httpx.Request] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        request.read()
        self.requests.append(request)
        return self.handler(request)

    def body(self, n: int = 0) -> dict[str, Any]:
        sent: dict[str, Any] = json.loads(self.requests[n].content)
        return sent


def call(
    server: Server,
    kind: str = "openai",
    key: str | None = KEY,
    endpoint: str | None = None,
) -> tuple[ModelReply, RecordingSink]:
    async def go() -> tuple[ModelReply, RecordingSink]:
        sink = RecordingSink()
        where = endpoint or (LOCAL_ENDPOINT if kind == "mlx" else ENDPOINT)
        async with httpx.AsyncClient(transport=httpx.MockTransport(server)) as client:
            model: Model
            if kind == "mlx":
                model = LocalModel(profile("mlx", endpoint=where), client, key)
            else:
                model = OpenAIStreamingModel(profile(endpoint=where), client, key)
            reply = await model.complete(dict(PAYLOAD), sink)
        return reply, sink

    return asyncio.run(go())


def failing(server: Server, kind: str = "openai", key: str | None = KEY) -> ModelError:
    with pytest.raises(ModelError) as caught:
        call(server, kind, key)
    return caught.value


def respond(status: int, body: str, headers: dict[str, str] | None = None) -> Server:
    return Server(lambda _: httpx.Response(status, text=body, headers=headers or {}))


def run_pool(body: Callable[[ProviderPool], Awaitable[None]], server: Server) -> None:
    async def go() -> None:
        pool = ProviderPool(transport=httpx.MockTransport(server))
        try:
            await body(pool)
        finally:
            await pool.aclose()

    asyncio.run(go())
