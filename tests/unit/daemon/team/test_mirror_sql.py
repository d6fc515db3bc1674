"""A batch of the mirror's writes on a real PostgreSQL: replayable, and who answered."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from coding_harness.daemon.config.hub_settings import HubSettings, RunnerSettings
from coding_harness.daemon.team.connect import open_connection
from coding_harness.daemon.team.mirror_queue import EVENTS, Op
from coding_harness.daemon.team.mirror_sql import Who, write_batch
from coding_harness.daemon.team.schema import migrate

WHO = Who(runner="box", person="ann", host="box.local")


def _settings(url: str) -> HubSettings:
    return HubSettings(url=url, name="team-a", person="ann", runner=RunnerSettings(name="box"))


def _batch(resolved_data: dict[str, Any]) -> list[Op]:
    usage_row = ("s1", "t1", "fake", "m", 10, 0, 5, None, "2026-12-06", 3.5)
    return [
        Op("create_session", "s1", {"cwd": "/w\x00x", "provider": "fake", "model": "m", "at": 1.0}),
        Op("turn_started", "s1", {"turn": "t1", "text": "fix   it", "at": 2.0}),
        Op("approval_requested", "s1", {"id": "a1", "kind": "edit", "path": "x.py", "at": 2.5}),
        Op(
            "approval_resolved",
            "s1",
            {"id": "a1", "decision": "yes", "reason": "", "client": "harness (pid 7)", "at": 3},
        ),
        Op("usage", "s1", {"rows": [usage_row, usage_row]}),
        Op(
            EVENTS,
            "s1",
            {
                "rows": [
                    ("s1", 1, "turn.started", "{}", 2.0),
                    ("s1", 2, "approval.resolved", json.dumps(resolved_data), 3.0),
                ]
            },
        ),
        Op("turn_finished", "s1", {"turn": "t1", "state": "finished", "exit_code": 0, "at": 4}),
    ]


async def _write_twice_and_read(url: str, batch: list[Op]) -> dict[str, list[tuple[Any, ...]]]:
    conn = await open_connection(_settings(url))
    async with conn:
        await migrate(conn)
        await conn.execute("LISTEN hub_events")
        await write_batch(conn, batch, WHO)
        await write_batch(conn, batch, WHO)  # a replay changes nothing
        notes = [n.payload async for n in conn.notifies(timeout=0.5)]
        read: dict[str, list[tuple[Any, ...]]] = {"notes": [(n,) for n in notes]}
        for name, sql in {
            "sessions": "SELECT runner, person, host, cwd, title, last_seq FROM sessions",
            "events": "SELECT seq, kind FROM events ORDER BY seq",
            "turns": "SELECT id, text, state, exit_code FROM turns",
            "approvals": "SELECT decision, client, answered_by FROM approvals",
            "usage": "SELECT count(*), count(DISTINCT id) FROM usage",
        }.items():
            read[name] = [tuple(r) for r in await (await conn.execute(sql)).fetchall()]
        return read


def test_a_batch_written_twice_is_written_once_and_notifies_its_last_seq(hub_url: str) -> None:
    read = asyncio.run(_write_twice_and_read(hub_url, _batch({"request": "a1"})))
    assert read["sessions"] == [("box", "ann", "box.local", "/w\ufffdx", "fix it", 2)]
    assert read["events"] == [(1, "turn.started"), (2, "approval.resolved")]
    assert read["turns"] == [("t1", "fix   it", "finished", 0)]
    assert read["usage"] == [(2, 2)]
    assert read["notes"] == [("s1:2",), ("s1:2",)]
    # Without `answered_by` in the event, the client that answered.
    assert read["approvals"] == [("yes", "harness (pid 7)", "harness (pid 7)")]


def test_the_person_the_resolved_event_names_is_who_answered(hub_url: str) -> None:
    resolved = {"request": "a1", "answered_by": "bob@desk"}
    read = asyncio.run(_write_twice_and_read(hub_url, _batch(resolved)))
    assert read["approvals"] == [("yes", "harness (pid 7)", "bob@desk")]
