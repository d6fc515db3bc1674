"""The runner's inbox against a real PostgreSQL: each row applied once, by people allowed.

Two `Inbox` parts of the same runner drain together (as after a restart racing
the old process, or two loops of one): every row is claimed by one of them only.
The session is a real one with real pending approvals; an answer from someone
not in `hub.approvers` is refused with the line naming the fix.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, cast

from coding_harness.daemon.agent.seams import ApprovalRequest
from coding_harness.daemon.config.hub_settings import HubSettings, RunnerSettings
from coding_harness.daemon.config.notify_settings import NotifySettings
from coding_harness.daemon.sessions.session import Session, SessionTable
from coding_harness.daemon.team.build import RunnerDeps
from coding_harness.daemon.team.inbox import Inbox
from coding_harness.daemon.team.runner import HubRunner

ROWS = 12


def _settings(url: str) -> HubSettings:
    return HubSettings(
        url=url,
        name="t",
        person="ann",
        runner=RunnerSettings(name="desk"),
        approvers=("bo",),
    )


def _deps(tmp_path: Path, sessions: SessionTable) -> RunnerDeps:
    unused = cast(Any, None)  # the approvals need nothing else of the daemon
    return RunnerDeps(
        home=tmp_path, state_dir=tmp_path, sessions=sessions, configs=unused, turns=unused,
        store=lambda: unused,
    )  # fmt: skip


async def _send(runner: HubRunner, session: str, person: str, body: dict[str, Any]) -> int:
    async with runner.connection() as db:
        cursor = await db.execute(
            "INSERT INTO inbox (runner, session_id, kind, body, person, host, created_at)"
            " VALUES ('desk', %s, 'approval', %s, %s, 'box', extract(epoch from now()))"
            " RETURNING id",
            (session, json.dumps(body), person),
        )
        row = await cursor.fetchone()
    assert row is not None
    return int(row[0])


async def _outcomes(runner: HubRunner) -> dict[int, dict[str, Any]]:
    async with runner.connection() as db:
        cursor = await db.execute("SELECT id, outcome, done_at FROM inbox ORDER BY id")
        rows = await cursor.fetchall()
    assert all(row[2] is not None for row in rows)
    return {int(row[0]): json.loads(row[1]) for row in rows}


def test_each_row_is_applied_once_and_only_approvers_are_heard(
    hub_url: str, tmp_path: Path
) -> None:
    async def go() -> tuple[list[int], dict[int, dict[str, Any]], list[dict[str, Any]]]:
        session = Session(id="20261206-000000-abcdef", cwd=tmp_path)
        session.approvals.notify = NotifySettings(bell=False, desktop="off", after_seconds=3600)
        sessions = SessionTable()
        sessions.add(session)
        runner = HubRunner(_settings(hub_url))
        await runner.start()
        try:
            await asyncio.wait_for(runner.ready.wait(), 20)
            asks = [
                asyncio.create_task(
                    session.approvals.ask(
                        ApprovalRequest(kind="edit", path=f"f{n}", diff="", summary="")
                    )
                )
                for n in range(ROWS)
            ]
            await asyncio.sleep(0)  # each asks, and waits
            requests = [e.data["request"] for e in session.events]
            refused = await _send(
                runner, session.id, "eve", {"request": requests[0], "decision": "yes"}
            )
            for request in requests:
                await _send(runner, session.id, "bo", {"request": request, "decision": "yes"})
            first, second = Inbox(_deps(tmp_path, sessions)), Inbox(_deps(tmp_path, sessions))
            applied = await asyncio.gather(first.drain(runner), second.drain(runner))
            decisions = await asyncio.gather(*asks)
            assert {d.decision for d in decisions} == {"yes"}
            outcomes = await _outcomes(runner)
            assert "error" in outcomes.pop(refused)
            resolved = [e.data for e in session.events if e.kind == "approval.resolved"]
            return list(applied), outcomes, resolved
        finally:
            await runner.stop()

    applied, outcomes, resolved = asyncio.run(go())
    assert sum(applied) == ROWS + 1  # the refusal was applied (as a refusal) once too
    assert all("result" in outcome for outcome in outcomes.values()), outcomes
    assert len(resolved) == ROWS
    assert {data["answered_by"] for data in resolved} == {"bo"}


def test_a_refused_answer_names_the_fix_and_the_request_still_waits(
    hub_url: str, tmp_path: Path
) -> None:
    async def go() -> tuple[dict[str, Any], bool]:
        session = Session(id="20261206-000000-abcdef", cwd=tmp_path)
        session.approvals.notify = NotifySettings(bell=False, desktop="off", after_seconds=3600)
        sessions = SessionTable()
        sessions.add(session)
        runner = HubRunner(_settings(hub_url))
        await runner.start()
        try:
            await asyncio.wait_for(runner.ready.wait(), 20)
            ask = asyncio.create_task(
                session.approvals.ask(ApprovalRequest(kind="edit", path="f", diff="", summary=""))
            )
            await asyncio.sleep(0)
            request = session.events[-1].data["request"]
            sent = await _send(runner, session.id, "eve", {"request": request, "decision": "yes"})
            await Inbox(_deps(tmp_path, sessions)).drain(runner)
            outcome = (await _outcomes(runner))[sent]
            still = not ask.done() and session.approvals.waiting_for() is not None
            ask.cancel()
            return outcome, still
        finally:
            await runner.stop()

    outcome, still_waiting = asyncio.run(go())
    assert outcome["error"]["message"] == (
        "eve may not answer desk's approvals: add them to hub.approvers in desk's global file"
    )
    assert still_waiting


def test_a_withdrawn_row_is_never_applied(hub_url: str, tmp_path: Path) -> None:
    async def go() -> int:
        runner = HubRunner(_settings(hub_url))
        await runner.start()
        try:
            await asyncio.wait_for(runner.ready.wait(), 20)
            sent = await _send(runner, "20261206-000000-abcdef", "bo", {"request": "a-1"})
            async with runner.connection() as db:
                await db.execute(
                    "UPDATE inbox SET done_at = 1, outcome = '{}' WHERE id = %s", (sent,)
                )
            return await Inbox(_deps(tmp_path, SessionTable())).drain(runner)
        finally:
            await runner.stop()

    assert asyncio.run(go()) == 0
