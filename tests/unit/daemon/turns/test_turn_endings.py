"""Every turn ends: a store that refuses writes, a fault in the daemon, a cancel mid-edit.

Whole turns through the real `TurnRunner` over a scripted model. Whatever
fails, the turn ends with `turn.finished`, an `error` event says why, the
session is idle and takes the next turn; a cancel after an edit was written
tells the model the edit is in place.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from pathlib import Path
from typing import Any

import psutil

from coding_harness.daemon.agent.seams import JSONObject, ToolExecutor
from coding_harness.daemon.store.db import Store
from coding_harness.daemon.tools.builtin import build_tools
from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.turns.runner import TurnRunner
from tests.support.turn_harness import FakePool, TurnHarness, calls, say
from tests.support.waiting import until

OLD, NEW = "x = 1\n", "x = 2\n"


def runner_for(harness: TurnHarness, tools: Any = build_tools) -> TurnRunner:
    pool: Any = FakePool(harness.model)
    return TurnRunner(configs=harness.configs, pool=pool, build_tools=tools)


async def finished(harness: TurnHarness, turn: str) -> JSONObject:
    for _ in range(2000):
        for event in harness.session.events:
            if event.kind == "turn.finished" and event.data["turn"] == turn:
                return event.data
        await asyncio.sleep(0.005)
    raise AssertionError(f"turn {turn} did not finish")


async def one_turn(runner: TurnRunner, harness: TurnHarness, text: str) -> JSONObject:
    options = {"route": "coding"}  # no classifier call
    started = runner.submit(
        harness.session, text, auto_approve=True, dry_run=False, options=options
    )
    return await finished(harness, str(started["turn"]))


def test_a_store_that_refuses_every_write_does_not_strand_the_turn(tmp_path: Path) -> None:
    harness = TurnHarness(tmp_path, [say("first"), say("second")])
    store = Store(tmp_path / "state" / "sessions.db")
    store.create_session(id="s-test", cwd=str(harness.cwd), provider=None, model=None,
                         created_at=0.0)  # fmt: skip
    db: sqlite3.Connection = store._db
    db.execute(f"PRAGMA max_page_count = {db.execute('PRAGMA page_count').fetchone()[0]}")
    harness.session.store = store

    async def scenario() -> list[JSONObject]:
        runner = runner_for(harness)
        try:
            big = "y" * 8_000  # needs new pages, which the store may not take
            return [await one_turn(runner, harness, big), await one_turn(runner, harness, big)]
        finally:
            await runner.close()

    first, second = asyncio.run(scenario())
    assert (first["reply"], first["exit_code"]) == ("first", 0)
    assert (second["reply"], second["exit_code"]) == ("second", 0)
    assert harness.session.state == "idle"
    assert store.problem is not None and "disk full" in store.problem


def test_a_fault_in_the_daemon_ends_the_turn_with_an_error_naming_it(tmp_path: Path) -> None:
    harness = TurnHarness(tmp_path, [say("after")])
    broken = True

    def tools(context: ToolContext) -> ToolExecutor:
        if broken:
            raise RuntimeError("tool table exploded")
        return build_tools(context)

    async def scenario() -> tuple[JSONObject, JSONObject]:
        nonlocal broken
        runner = runner_for(harness, tools)
        try:
            failed = await one_turn(runner, harness, "one")
            broken = False
            return failed, await one_turn(runner, harness, "two")
        finally:
            await runner.close()

    failed, after = asyncio.run(scenario())
    assert failed["exit_code"] == 1
    [error] = harness.events("error")
    assert error["kind"] == "internal"
    assert "internal error" in error["message"] and "tool table exploded" in error["message"]
    assert failed["reply"] == error["message"]
    assert after["exit_code"] == 0 and harness.session.state == "idle"


def checking() -> bool:
    """Whether the `sleep 30` of the test's `make check` runs under this process."""
    for kid in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):  # it may end while we look
            if kid.cmdline() == ["sleep", "30"]:
                return True
    return False


def test_a_cancel_during_make_check_says_the_edit_is_in_place(tmp_path: Path) -> None:
    edit = calls(("propose_edit", {"path": "a.py", "old": OLD, "new": NEW}))
    harness = TurnHarness(tmp_path, [edit])
    (harness.cwd / "a.py").write_text(OLD)
    (harness.cwd / "Makefile").write_text("check:\n\tsleep 30\n")

    async def scenario() -> JSONObject:
        runner = runner_for(harness)
        try:
            started = runner.submit(harness.session, "fix", auto_approve=True, dry_run=False)
            for _ in range(2000):
                if (harness.cwd / "a.py").read_text() == NEW:
                    break
                await asyncio.sleep(0.005)
            await until(checking, "make check to run")
            assert runner.cancel(harness.session)
            return await finished(harness, str(started["turn"]))
        finally:
            await runner.close()

    done = asyncio.run(scenario())
    assert done["exit_code"] == 130
    assert done["files_changed"] == ["a.py"]
    [result] = [m for m in harness.session.history if m["role"] == "tool"]
    assert result["content"].startswith("interrupted: the user cancelled")
    assert "The edit to 'a.py' had been written: the file holds the new text." in result["content"]
