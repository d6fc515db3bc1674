"""The hub's migrations against a real PostgreSQL: applied once, in order, by racing runners."""

from __future__ import annotations

import asyncio

import pytest

from coding_harness.daemon.config.hub_settings import HubSettings, RunnerSettings
from coding_harness.daemon.team.connect import HubUnreachable, describe, open_connection
from coding_harness.daemon.team.schema import LATEST, migrate


def _hub(url: str) -> HubSettings:
    return HubSettings(url=url, name="team-a", person="ann@box", runner=RunnerSettings(name="box"))


def test_a_fresh_database_is_brought_to_the_latest_version(hub_url: str) -> None:
    async def go() -> list[str]:
        conn = await open_connection(_hub(hub_url))
        async with conn:
            assert await migrate(conn) == LATEST
            cursor = await conn.execute(
                "SELECT table_name FROM information_schema.tables"
                " WHERE table_schema = 'public' ORDER BY table_name"
            )
            return [str(row[0]) for row in await cursor.fetchall()]

    tables = asyncio.run(go())
    for name in ("sessions", "events", "turns", "approvals", "usage", "runners", "inbox", "tasks"):
        assert name in tables
    assert "schema_migrations" in tables


def test_runners_starting_together_apply_each_migration_once(hub_url: str) -> None:
    async def one() -> int:
        conn = await open_connection(_hub(hub_url))
        async with conn:
            return await migrate(conn)

    async def race() -> tuple[list[int], int]:
        versions = await asyncio.gather(*(one() for _ in range(6)))
        conn = await open_connection(_hub(hub_url))
        async with conn:
            cursor = await conn.execute("SELECT count(*) FROM schema_migrations")
            row = await cursor.fetchone()
            assert row is not None
            return list(versions), int(row[0])  # type: ignore[call-overload]

    versions, rows = asyncio.run(race())
    assert versions == [LATEST] * 6
    assert rows == LATEST


def test_an_unreachable_hub_names_itself_and_never_its_password(tmp_path: object) -> None:
    hub = _hub("postgresql://ann:s3cret@/nowhere?host=/tmp/no-such-folder-for-pg")
    with pytest.raises(HubUnreachable) as caught:
        asyncio.run(open_connection(hub))
    message = str(caught.value)
    assert "hub team-a" in message and "nowhere" in message
    assert "s3cret" not in message
    assert "s3cret" not in describe(hub)
