"""Closing a session: its queued turns end unstarted, its running turn is cancelled,
its worker ends, and nothing of it stays in the runner."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from coding_harness.daemon.agent.seams import ModelReply
from coding_harness.daemon.tools.builtin import build_tools
from coding_harness.daemon.turns.runner import TurnRunner
from tests.support.turn_harness import FakePool, TurnHarness, say
from tests.support.waiting import until


class Stuck:
    """A model that never answers, so the first turn is still running at the close."""

    label = "stuck"

    def __init__(self) -> None:
        self.asked: list[Any] = []

    async def complete(self, payload: Any, sink: Any) -> ModelReply:
        self.asked.append(payload)
        await asyncio.sleep(60)
        raise AssertionError("not cancelled")


def test_forgetting_a_session_ends_its_turns_and_its_worker(tmp_path: Path) -> None:
    harness = TurnHarness(tmp_path, [say("never asked")])
    model = Stuck()
    pool: Any = FakePool(harness.model)
    pool.notes.model = model

    async def scenario() -> tuple[list[tuple[int, str]], bool, int]:
        runner = TurnRunner(configs=harness.configs, pool=pool, build_tools=build_tools)
        session = harness.session
        try:
            opts = {"route": "coding"}
            runner.submit(session, "first", auto_approve=True, dry_run=False, options=opts)
            runner.submit(session, "second", auto_approve=True, dry_run=False, options=opts)
            await until(lambda: model.asked, "the first turn to wait for the model")
            (worker,) = [t for t in asyncio.all_tasks() if t.get_name() == f"turns-{session.id}"]
            runner.forget(session)

            def ended() -> list[tuple[int, str]]:
                done = [e.data for e in session.events if e.kind == "turn.finished"]
                return [(d["exit_code"], d["reply"]) for d in done]

            await until(lambda: len(ended()) == 2 and worker.done(), "both turns and the worker")
            return ended(), worker.cancelled(), runner.running()
        finally:
            await runner.close()

    ended, cancelled, running = asyncio.run(scenario())
    assert sorted(ended) == [(130, "(cancelled)"), (130, "(not started: the session was closed)")]
    assert not cancelled and running == 0  # the worker returned on its own
