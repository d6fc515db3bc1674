"""The mirror past its queue's bound, on a real store and a real PostgreSQL: the dropped
events are copied from the store by the catch-up, in order, each once."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from coding_harness.daemon.config.hub_settings import HubSettings, RunnerSettings
from coding_harness.daemon.sessions.session import SessionTable
from coding_harness.daemon.store.db import Store
from coding_harness.daemon.team.mirror import Mirror
from coding_harness.daemon.team.runner import HubRunner


def _settings(url: str) -> HubSettings:
    return HubSettings(url=url, name="team-a", person="ann", runner=RunnerSettings(name="box"))


async def _hub_seqs(runner: HubRunner, sid: str) -> list[int]:
    async with runner.connection() as conn:
        cursor = await conn.execute(
            "SELECT seq FROM events WHERE session_id = %s ORDER BY seq", (sid,)
        )
        return [int(row[0]) for row in await cursor.fetchall()]


async def _until(condition: Any, what: str, within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while not await condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


def test_events_dropped_past_the_bound_reach_the_hub_from_the_store(
    tmp_path: Path, hub_url: str
) -> None:
    store = Store(tmp_path / "sessions.db")
    deps = SimpleNamespace(store=lambda: store, sessions=SessionTable())
    mirror = Mirror(deps, max_ops=5)
    runner = HubRunner(_settings(hub_url))
    runner.add(mirror)

    async def go() -> tuple[list[int], int]:
        await runner.start()
        try:
            await asyncio.wait_for(runner.ready.wait(), 30)
            store.create_session(id="s1", cwd="/w", provider=None, model=None, created_at=1.0)
            # Twenty writes in a row, the push task never running between: past the bound.
            for first in range(1, 1001, 50):
                events = [
                    (seq, "text.delta", {"text": "w"}, 2.0) for seq in range(first, first + 50)
                ]
                store.record_events("s1", events)
            assert "s1" in mirror.queue.behind
            dropped = mirror.queue.dropped
            wanted = list(range(1, 1001))

            async def copied() -> bool:
                return await _hub_seqs(runner, "s1") == wanted

            await _until(copied, "the catch-up")
            return await _hub_seqs(runner, "s1"), dropped
        finally:
            await runner.stop()
            store.close()

    seqs, dropped = asyncio.run(go())
    assert dropped > 0
    assert seqs == list(range(1, 1001))
