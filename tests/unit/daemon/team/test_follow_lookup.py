"""Naming another runner's session: full id, short id, or a prefix that fits one."""

from __future__ import annotations

import asyncio

import pytest

from coding_harness.daemon.config.hub_settings import HubSettings, RunnerSettings
from coding_harness.daemon.methods.remote_sessions import pick
from coding_harness.daemon.team.connect import open_connection
from coding_harness.daemon.team.follow_rows import HubSession, sessions_named
from coding_harness.daemon.team.schema import migrate
from coding_harness.protocol import errors

IDS = ("20261205-233521-68e7d5", "20261205-233522-68f001", "20261206-101010-a1b2c3")


def _row(session_id: str, runner: str = "desk") -> HubSession:
    return HubSession(
        id=session_id, runner=runner, person="ann", host="desk", cwd="/w", title="", state="idle",
        provider=None, model=None, created_at=0.0, last_activity=0.0, last_seq=0, cost_usd=None,
        closed=False,
    )  # fmt: skip


ROWS = [_row(i) for i in IDS]


@pytest.mark.parametrize(
    ("wanted", "found"),
    [
        (IDS[0], IDS[0]),  # the full id
        ("68e7d5", IDS[0]),  # the short id
        ("a1b", IDS[2]),  # a prefix of a short id
        ("20261206", IDS[2]),  # a prefix of a full id
        ("ffff", None),
    ],
)
def test_a_session_is_named_by_its_id_its_short_id_or_a_prefix(wanted: str, found: str) -> None:
    chosen = pick(ROWS, wanted)
    assert (chosen.id if chosen else None) == found


def test_a_prefix_that_fits_several_names_them_and_their_runners() -> None:
    with pytest.raises(errors.InvalidParams) as caught:
        pick(ROWS, "68")
    assert f"{IDS[0]} on desk" in caught.value.message
    assert f"{IDS[1]} on desk" in caught.value.message


def test_the_hub_finds_other_runners_sessions_by_id_short_id_and_prefix(hub_url: str) -> None:
    hub = HubSettings(url=hub_url, name="t", person="bo", runner=RunnerSettings(name="laptop"))

    async def go() -> dict[str, list[str]]:
        conn = await open_connection(hub)
        async with conn:
            await migrate(conn)
            for number, (sid, runner) in enumerate(
                [(IDS[0], "desk"), (IDS[1], "desk"), (IDS[2], "laptop"), ("2026_x-1", "desk")]
            ):
                await conn.execute(
                    "INSERT INTO sessions (id, runner, person, host, cwd, created_at,"
                    " last_activity) VALUES (%s, %s, 'p', 'h', '/w', %s, 0)",
                    (sid, runner, float(number)),
                )
            found = {}
            for wanted in ("68e7d5", "68", "a1b2c3", IDS[0], "2026_", "2026%", "2026"):
                rows = await sessions_named(conn, wanted, besides="laptop")
                found[wanted] = [row.id for row in rows]
            return found

    found = asyncio.run(go())
    assert found["68e7d5"] == [IDS[0]]
    assert found["68"] == [IDS[0], IDS[1]]
    assert found["a1b2c3"] == []  # this runner's own session is not another's
    assert found[IDS[0]] == [IDS[0]]
    assert found["2026_"] == ["2026_x-1"]  # LIKE's wildcards are taken literally
    assert found["2026%"] == []
    assert found["2026"] == [IDS[0], IDS[1], "2026_x-1"]
