"""The pool after a reload: `prune` retires clients of profiles no longer configured,
without cutting a request in flight (over httpx.MockTransport)."""

from __future__ import annotations

import asyncio
import json

import httpx

from coding_harness.daemon.config.profiles import ProviderProfile
from coding_harness.daemon.providers.pool import ProviderPool, pool_key
from tests.support.sinks import RecordingSink

BODY = {
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}
    ],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1},
}


def profile(
    name: str, endpoint: str = "http://localhost:8080/v1/chat/completions"
) -> ProviderProfile:
    return ProviderProfile(name=name, type="mlx", endpoint=endpoint, model="m")


def test_prune_closes_idle_clients_not_kept_and_keeps_the_rest() -> None:
    async def go() -> None:
        pool = ProviderPool(transport=httpx.MockTransport(lambda _: httpx.Response(200, json=BODY)))
        kept, gone = profile("kept"), profile("gone", "https://old.example/v1")
        kept_client, gone_client = pool.client_for(kept), pool.client_for(gone)
        retired = await pool.prune({pool_key(kept)})
        assert retired == [pool_key(gone)]
        assert gone_client.is_closed and not kept_client.is_closed
        assert pool.client_for(kept) is kept_client and pool.client_count == 1
        await pool.aclose()

    asyncio.run(go())


def test_a_request_in_flight_finishes_and_its_client_closes_after() -> None:
    release = asyncio.Event()
    started = asyncio.Event()

    async def slow(request: httpx.Request) -> httpx.Response:
        started.set()
        await release.wait()
        return httpx.Response(200, json=BODY)

    async def go() -> None:
        pool = ProviderPool(transport=httpx.MockTransport(slow))
        old = profile("old")
        model = pool.model_for(old, None)
        request = asyncio.create_task(
            model.complete({"model": "m", "messages": []}, RecordingSink())
        )
        await started.wait()
        client = pool.client_for(old)
        assert await pool.prune(set()) == [pool_key(old)]
        assert not client.is_closed  # busy: retired, not cut
        release.set()
        reply = await request
        assert reply.content == "hi"
        assert client.is_closed
        # The same turn asks again: a fresh client, left for the next prune.
        second = asyncio.create_task(
            model.complete({"model": "m", "messages": []}, RecordingSink())
        )
        assert (await second).content == "hi"
        assert pool.client_count == 1 and pool.client_for(old) is not client
        await pool.aclose()

    asyncio.run(go())


def test_requests_carry_the_model_through_a_lent_client() -> None:
    seen: list[str] = []

    def record(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content)["model"])
        return httpx.Response(200, json=BODY)

    async def go() -> None:
        pool = ProviderPool(transport=httpx.MockTransport(record))
        await pool.model_for(profile("p"), None).complete(
            {"model": "m-1", "messages": []}, RecordingSink()
        )
        await pool.aclose()

    asyncio.run(go())
    assert seen == ["m-1"]
