"""The gate per model: at most `max_parallel` requests in flight, the rest in order,
a cancelled waiter gone from the queue, and the queue's place for `session.list`."""

from __future__ import annotations

import asyncio

import pytest

from coding_harness.daemon.config.profiles import (
    ConfigError,
    ProviderProfile,
    RetrySettings,
    parse_profile,
)
from coding_harness.daemon.providers.model_gate import ModelGate, ModelGates


async def _hold(gate: ModelGate, owner: str, release: asyncio.Event, log: list[str]) -> None:
    async with gate.slot(owner):
        log.append(owner)
        await release.wait()


def test_one_at_a_time_in_the_order_they_came() -> None:
    async def body() -> None:
        gate = ModelGate("local", 1)
        releases = {name: asyncio.Event() for name in "abc"}
        log: list[str] = []
        tasks = [asyncio.create_task(_hold(gate, n, releases[n], log)) for n in "abc"]
        await asyncio.sleep(0)
        assert log == ["a"] and gate.in_flight == 1
        assert (gate.waiting("b"), gate.waiting("c"), gate.waiting("a")) == (1, 2, None)
        releases["a"].set()
        await asyncio.sleep(0.01)
        assert log == ["a", "b"] and gate.waiting("c") == 1
        releases["b"].set()
        releases["c"].set()
        await asyncio.gather(*tasks)
        assert gate.most_in_flight == 1 and gate.in_flight == 0 and gate.queued == 0

    asyncio.run(body())


def test_a_cancelled_waiter_leaves_the_queue_and_no_place_is_lost() -> None:
    async def body() -> None:
        gate = ModelGate("local", 1)
        first, never = asyncio.Event(), asyncio.Event()
        log: list[str] = []
        running = asyncio.create_task(_hold(gate, "a", first, log))
        await asyncio.sleep(0)
        leaving = asyncio.create_task(_hold(gate, "b", never, log))
        after = asyncio.create_task(_hold(gate, "c", first, log))
        await asyncio.sleep(0)
        leaving.cancel()
        await asyncio.sleep(0)
        assert gate.waiting("b") is None and gate.waiting("c") == 1
        first.set()
        await asyncio.gather(running, after)
        assert log == ["a", "c"] and gate.in_flight == 0

    asyncio.run(body())


def test_cancelled_as_its_place_came_hands_the_place_on() -> None:
    async def body() -> None:
        gate = ModelGate("local", 1)
        first, never = asyncio.Event(), asyncio.Event()
        log: list[str] = []
        running = asyncio.create_task(_hold(gate, "a", first, log))
        await asyncio.sleep(0)
        unlucky = asyncio.create_task(_hold(gate, "b", never, log))
        last = asyncio.create_task(_hold(gate, "c", first, log))
        await asyncio.sleep(0)
        first.set()
        await asyncio.sleep(0)  # a ends: b is handed the place, not yet resumed
        unlucky.cancel()
        await asyncio.gather(running, last, return_exceptions=True)
        assert log == ["a", "c"] and gate.in_flight == 0

    asyncio.run(body())


def test_no_limit_lets_all_through_and_a_raised_limit_frees_the_waiting() -> None:
    async def body() -> None:
        gate = ModelGates().gate("k", "local", 1)
        release = asyncio.Event()
        log: list[str] = []
        tasks = [asyncio.create_task(_hold(gate, n, release, log)) for n in "abc"]
        await asyncio.sleep(0)
        assert log == ["a"]
        gate.set_limit(None)
        await asyncio.sleep(0.01)
        assert sorted(log) == ["a", "b", "c"] and gate.most_in_flight == 3
        release.set()
        await asyncio.gather(*tasks)

    asyncio.run(body())


def test_the_gates_say_where_a_session_waits() -> None:
    async def body() -> None:
        gates = ModelGates()
        gate = gates.gate(("local", "http://127.0.0.1:1"), "local", 1)
        told: list[int] = []
        release = asyncio.Event()

        async def ask(owner: str) -> None:
            async with gate.slot(owner, told.append):
                await release.wait()

        tasks = [asyncio.create_task(ask(n)) for n in ("s1", "s2", "s3")]
        await asyncio.sleep(0)
        assert gates.queued("s3") == {"model": "local", "ahead": 2, "limit": 1}
        assert gates.queued("s1") is None and told == [1, 2]
        release.set()
        await asyncio.gather(*tasks)

    asyncio.run(body())


def _profile(**raw: object) -> ProviderProfile:
    return parse_profile("p", {"model": "m", **raw}, lambda path: "f.json", RetrySettings())


def test_max_parallel_defaults_to_one_for_a_local_server_only() -> None:
    assert _profile(endpoint="http://127.0.0.1:8080/v1").max_parallel == 1
    assert _profile(endpoint="https://api.example.com/v1").max_parallel is None
    local = _profile(endpoint="http://localhost:1/v1", max_parallel=0)
    assert local.max_parallel is None
    assert _profile(endpoint="https://x/v1", max_parallel=3).max_parallel == 3
    with pytest.raises(ConfigError, match="max_parallel must be a whole number"):
        _profile(endpoint="https://x/v1", max_parallel="two")
