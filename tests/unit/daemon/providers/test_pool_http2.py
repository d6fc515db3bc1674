"""Which HTTP versions the pool's clients offer: HTTP/2 (with HTTP/1.1) for https
endpoints, HTTP/1.1 only for plain http. Read from the client's own connection pool,
as httpx built it; an injected transport is used as it is."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from coding_harness.daemon.config.profiles import ProviderProfile
from coding_harness.daemon.providers.pool import ProviderPool, offers_http2
from tests.support.sinks import RecordingSink


def profile(name: str, endpoint: str) -> ProviderProfile:
    return ProviderProfile(name=name, type="openai", endpoint=endpoint, model="m")


def versions(client: httpx.AsyncClient) -> tuple[bool, bool]:
    """(HTTP/1.1 offered, HTTP/2 offered) by a client's transport."""
    transport = client._transport
    assert isinstance(transport, httpx.AsyncHTTPTransport)
    return transport._pool._http1, transport._pool._http2


@pytest.mark.parametrize(
    ("endpoint", "expected"),
    [
        ("https://api.example.com/v1/chat/completions", (True, True)),
        ("HTTPS://API.EXAMPLE.COM:8443/v1", (True, True)),
        ("http://localhost:11434/v1/chat/completions", (True, False)),
        ("http://10.1.2.3:8080/v1", (True, False)),
    ],
)
def test_https_clients_offer_http2_and_plain_http_ones_do_not(
    endpoint: str, expected: tuple[bool, bool]
) -> None:
    async def go() -> tuple[bool, bool]:
        pool = ProviderPool()
        try:
            return versions(pool.client_for(profile("p", endpoint)))
        finally:
            await pool.aclose()

    assert asyncio.run(go()) == expected


def test_one_profile_name_on_two_schemes_gets_two_clients() -> None:
    async def go() -> None:
        pool = ProviderPool()
        secure = pool.client_for(profile("p", "https://models.example/v1"))
        plain = pool.client_for(profile("p", "http://models.example/v1"))
        assert secure is not plain
        assert versions(secure) == (True, True) and versions(plain) == (True, False)
        await pool.aclose()

    asyncio.run(go())


def test_the_origin_decides() -> None:
    assert offers_http2("https://api.example.com")
    assert not offers_http2("http://api.example.com")


def test_an_injected_transport_still_serves_https_profiles() -> None:
    body = {
        "choices": [{"index": 0, "message": {"content": "hi"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1},
    }
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, json=body)

    async def go() -> str:
        pool = ProviderPool(transport=httpx.MockTransport(answer))
        try:
            model = pool.model_for(profile("p", "https://api.example.com/v1"), "sk-x")
            reply = await model.complete({"model": "m", "messages": []}, RecordingSink())
            return reply.content
        finally:
            await pool.aclose()

    assert asyncio.run(go()) == "hi"
    assert seen == ["https://api.example.com/v1"]
