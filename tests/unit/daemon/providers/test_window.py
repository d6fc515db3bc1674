"""The window each kind of server tells, asked over real HTTP of the fake model server."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from coding_harness.daemon.config.profiles import ProviderProfile
from coding_harness.daemon.providers.pool import ProviderPool
from coding_harness.daemon.providers.window import (
    NOTHING,
    ServerWindow,
    from_llamacpp_props,
    from_models_list,
    from_ollama_show,
    models_url,
    probe_window,
)
from tests.support.fake_model_server import FakeModelServer


def probe(server: FakeModelServer, model: str = "fake-model") -> ServerWindow:
    async def go() -> ServerWindow:
        async with httpx.AsyncClient() as client:
            return await probe_window(client, server.endpoint, model, None)

    return asyncio.run(go())


@pytest.mark.parametrize(
    ("kind", "source"),
    [
        ("llama.cpp", "llama.cpp /props n_ctx"),
        ("lmstudio", "LM Studio loaded_context_length"),
        ("vllm", "/models max_model_len"),
        ("openrouter", "/models top_provider.context_length"),
        ("ollama", "Ollama /api/ps"),
    ],
)
def test_each_server_kind_tells_its_window(kind: str, source: str) -> None:
    with FakeModelServer() as server:
        server.serve_window(kind, 6144)
        found = probe(server)
    assert (found.tokens, found.source, found.assumed) == (6144, source, False)


def test_an_ollama_model_not_loaded_gets_its_num_ctx_from_api_show() -> None:
    with FakeModelServer() as server:
        server.serve_window("ollama", 8192, loaded=False, num_ctx=12_288)
        found = probe(server)
    assert (found.tokens, found.source, found.assumed) == (12_288, "Ollama num_ctx", False)
    assert "POST /api/show" in server.probes


def test_an_ollama_model_without_num_ctx_is_assumed_at_the_servers_default() -> None:
    with FakeModelServer() as server:
        server.serve_window("ollama", 8192, loaded=False)
        found = probe(server)
    assert found.tokens == 4096 and found.assumed and found.server == "ollama"


def test_a_server_that_tells_nothing_gives_nothing_and_no_chat_request() -> None:
    with FakeModelServer() as server:
        found = probe(server)
    assert found == NOTHING
    assert server.requests == []  # the look-ups never took a scripted answer
    assert server.probes == ["GET /api/ps", "GET /props", "GET /api/v0/models", "GET /v1/models"]


def test_parsers_read_the_documented_shapes() -> None:
    props = {"default_generation_settings": {"n_ctx": 1024}, "total_slots": 1}
    assert from_llamacpp_props(props).tokens == 1024
    show = {
        "parameters": "stop <|im_end|>\nnum_ctx 16384",
        "model_info": {"llama.context_length": 131072},
    }
    assert from_ollama_show(show).tokens == 16384
    tiny = from_ollama_show({"parameters": "", "model_info": {"x.context_length": 2048}})
    assert tiny.tokens == 2048 and tiny.assumed  # the default, within the model's maximum
    listing = {"data": [{"id": "a", "max_model_len": 4096}, {"id": "b", "max_model_len": 99}]}
    assert from_models_list(listing, "b").tokens == 99
    assert from_models_list({"data": "nonsense"}, "b") == NOTHING
    assert models_url("http://h:1/v1/chat/completions") == "http://h:1/v1/models"


def test_the_pool_keeps_a_stated_window_and_asks_again_for_a_guess() -> None:
    async def go(server: FakeModelServer) -> list[int | None]:
        pool = ProviderPool()
        profile = ProviderProfile(
            name="local", type="openai", endpoint=server.endpoint, model="fake-model"
        )
        try:
            first = await pool.facts.window(profile, None)
            server.serve_window("llama.cpp", 2048)  # a restarted server, within the minute
            second = await pool.facts.window(profile, None)
            pool.facts.forget_window(profile)
            third = await pool.facts.window(profile, None)
            return [first.tokens, second.tokens, third.tokens]
        finally:
            await pool.aclose()

    with FakeModelServer() as server:
        server.serve_window("llama.cpp", 8192)
        assert asyncio.run(go(server)) == [8192, 8192, 2048]
