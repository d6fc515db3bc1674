"""The queue's SQL against a real PostgreSQL: claims under SKIP LOCKED, leases, fencing."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from coding_harness.daemon.config.hub_settings import HubSettings, RunnerSettings
from coding_harness.daemon.team import task_claims as claims
from coding_harness.daemon.team.connect import open_connection
from coding_harness.daemon.team.schema import migrate

T = TypeVar("T")
REPO = "https://example.test/a.git"


def _hub(url: str) -> HubSettings:
    return HubSettings(url=url, name="team-a", person="ann@box", runner=RunnerSettings(name="box"))


def _on_hub(url: str, work: Callable[[claims.Conn], Awaitable[T]]) -> T:
    async def go() -> T:
        conn = await open_connection(_hub(url))
        async with conn:
            await migrate(conn)
            return await work(conn)

    return asyncio.run(go())


async def _queue(conn: claims.Conn, count: int, repo: str = REPO) -> list[int]:
    return [
        await claims.submit(conn, text=f"task {n}", repo=repo, ref="main", person="ann", host="h")
        for n in range(count)
    ]


def _row(conn: claims.Conn, task: int) -> Awaitable[Any]:
    async def read() -> Any:
        cursor = await conn.execute(
            "SELECT state, runner, attempt, patch, error FROM tasks WHERE id = %s", (task,)
        )
        return await cursor.fetchone()

    return read()


def test_racing_claims_take_each_task_once(hub_url: str) -> None:
    async def work(conn: claims.Conn) -> tuple[list[int], list[int]]:
        queued = await _queue(conn, 30)
        conns = [await open_connection(_hub(hub_url)) for _ in range(4)]
        taken: list[int] = []

        async def drain(index: int, db: claims.Conn) -> None:
            runner = f"r{index}"
            while got := await claims.claim(db, runner=runner, repos=None, lease_seconds=60):
                taken.append(got.id)

        try:
            await asyncio.gather(*(drain(i, db) for i, db in enumerate(conns)))
        finally:
            for db in conns:
                await db.close()
        return queued, taken

    queued, taken = _on_hub(hub_url, work)
    assert sorted(taken) == queued  # every task once, none twice


def test_a_claim_takes_only_the_repositories_the_runner_accepts(hub_url: str) -> None:
    async def work(conn: claims.Conn) -> tuple[Any, Any, Any]:
        (other,) = await _queue(conn, 1, repo="https://example.test/other.git")
        (mine,) = await _queue(conn, 1)
        got = await claims.claim(conn, runner="r", repos=(REPO,), lease_seconds=60)
        again = await claims.claim(conn, runner="r", repos=(REPO,), lease_seconds=60)
        return got, again, (mine, other)

    got, again, (mine, _other) = _on_hub(hub_url, work)
    assert got is not None and got.id == mine and got.attempt == 1 and got.runner == "r"
    assert again is None


def test_an_ended_lease_is_claimed_again_and_its_old_holder_is_fenced_out(hub_url: str) -> None:
    async def work(conn: claims.Conn) -> dict[str, Any]:
        (task,) = await _queue(conn, 1)
        first = await claims.claim(conn, runner="a", repos=None, lease_seconds=0.0)
        assert first is not None
        await conn.execute("SELECT pg_sleep(0.01)")
        second = await claims.claim(conn, runner="b", repos=None, lease_seconds=60)
        assert second is not None
        return {
            "second": second,
            "old_renew": await claims.renew(conn, first, 60),
            "old_session": await claims.note_session(conn, first, "s-old"),
            "old_finish": await claims.finish(
                conn, first, claims.Outcome(state="done", patch="old")
            ),
            "new_renew": await claims.renew(conn, second, 60),
            "new_finish": await claims.finish(
                conn, second, claims.Outcome(state="done", patch="new\x00")
            ),
            "row": await _row(conn, task),
        }

    seen = _on_hub(hub_url, work)
    assert seen["second"].attempt == 2 and seen["second"].runner == "b"
    assert seen["old_renew"] is None
    assert seen["old_session"] is False and seen["old_finish"] is False
    assert seen["new_renew"] is False  # ours, no cancel asked
    assert seen["new_finish"] is True
    assert seen["row"] == ("done", "b", 2, "new\\0", None)


def test_a_held_lease_is_not_claimed(hub_url: str) -> None:
    async def work(conn: claims.Conn) -> Any:
        await _queue(conn, 1)
        assert await claims.claim(conn, runner="a", repos=None, lease_seconds=60) is not None
        return await claims.claim(conn, runner="b", repos=None, lease_seconds=60)

    assert _on_hub(hub_url, work) is None


def test_cancel_of_queued_running_and_finished_tasks(hub_url: str) -> None:
    async def work(conn: claims.Conn) -> dict[str, Any]:
        queued, running = await _queue(conn, 2)
        held = await claims.claim(conn, runner="a", repos=None, lease_seconds=60)
        assert held is not None and held.id == queued  # the oldest first
        first = await claims.cancel(conn, running, "bob")
        second = await claims.cancel(conn, queued, "bob")
        return {
            "queued": first,
            "running": second,
            "again": await claims.cancel(conn, running, "bob"),
            "missing": await claims.cancel(conn, 999, "bob"),
            "renew": await claims.renew(conn, held, 60),
            "row": await _row(conn, running),
            "claim": await claims.claim(conn, runner="b", repos=None, lease_seconds=60),
        }

    seen = _on_hub(hub_url, work)
    assert seen["queued"] == ("cancelled", True)
    assert seen["running"] == ("running", True)
    assert seen["again"] == ("cancelled", False)
    assert seen["missing"] is None
    assert seen["renew"] is True  # the runner learns of the cancel at its next renewal
    assert seen["row"][0] == "cancelled" and seen["row"][4] == "cancelled by bob"
    assert seen["claim"] is None


def test_reap_ends_tasks_nobody_may_claim_again(hub_url: str) -> None:
    async def work(conn: claims.Conn) -> tuple[int, Any, Any]:
        tired, cancelled = await _queue(conn, 2)
        for attempt in range(1, claims.MAX_ATTEMPTS + 1):
            await conn.execute("SELECT pg_sleep(0.01)")
            got = await claims.claim(conn, runner="a", repos=None, lease_seconds=0.0)
            assert got is not None and (got.id, got.attempt) == (tired, attempt)
        # Its runners stopped three times: the next claim takes the other task.
        got = await claims.claim(conn, runner="a", repos=None, lease_seconds=0.0)
        assert got is not None and got.id == cancelled
        await claims.cancel(conn, cancelled, "bob")
        await conn.execute("SELECT pg_sleep(0.01)")
        reaped = await claims.reap(conn)
        return reaped, await _row(conn, cancelled), await _row(conn, tired)

    reaped, cancelled, tired = _on_hub(hub_url, work)
    assert reaped == 2
    assert cancelled[0] == "cancelled"
    assert tired[0] == "failed" and "stopped 3 times" in tired[4]


def test_release_puts_a_task_back_for_another_runner(hub_url: str) -> None:
    async def work(conn: claims.Conn) -> tuple[bool, Any]:
        await _queue(conn, 1)
        held = await claims.claim(conn, runner="a", repos=None, lease_seconds=60)
        assert held is not None
        released = await claims.release(conn, held)
        return released, await claims.claim(conn, runner="b", repos=None, lease_seconds=60)

    released, again = _on_hub(hub_url, work)
    assert released is True
    assert again is not None and again.runner == "b" and again.attempt == 2


def test_listing_shows_the_newest_first_and_one_task_with_its_patch(hub_url: str) -> None:
    async def work(conn: claims.Conn) -> tuple[dict[str, Any], dict[str, Any]]:
        first, _second = await _queue(conn, 2)
        held = await claims.claim(conn, runner="a", repos=None, lease_seconds=60)
        assert held is not None
        await claims.finish(conn, held, claims.Outcome(state="done", patch="PATCH"))
        return await claims.listing(conn, limit=10), await claims.listing(conn, limit=1, task=first)

    many, one = _on_hub(hub_url, work)
    assert [row["state"] for row in many["tasks"]] == ["queued", "done"]
    assert "patch" not in many["tasks"][0]
    assert one["tasks"][0]["patch"] == "PATCH" and isinstance(one["now"], float)
