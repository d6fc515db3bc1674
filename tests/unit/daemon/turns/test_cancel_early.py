"""A turn cancelled in the instant between being taken from the queue and its first step.

Its task is cancelled before any of its code runs, so nothing of `_run` (which
always ends a turn with `turn.finished`) happens; the runner still ends it, so a
client waiting for the turn is not left waiting for ever.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from coding_harness.daemon.tools.builtin import build_tools
from coding_harness.daemon.turns.runner import TurnRunner
from tests.support.turn_harness import FakePool, TurnHarness, say
from tests.support.waiting import until


def test_a_turn_cancelled_before_its_first_step_still_finishes(tmp_path: Path) -> None:
    harness = TurnHarness(tmp_path, [say("never asked")])

    async def scenario() -> list[Any]:
        pool: Any = FakePool(harness.model)
        runner = TurnRunner(configs=harness.configs, pool=pool, build_tools=build_tools)
        try:
            runner.submit(harness.session, "go", auto_approve=True, dry_run=False)
            await asyncio.sleep(0)  # the worker takes the turn and makes its task, not run yet
            assert runner.cancel(harness.session)

            def ended() -> list[Any]:
                return [e.data for e in harness.session.events if e.kind == "turn.finished"]

            await until(ended, "turn.finished")
            return ended()
        finally:
            await runner.close()

    ended = asyncio.run(scenario())
    assert [(e["exit_code"], e["reply"]) for e in ended] == [(130, "(cancelled)")]
    assert harness.model.payloads == []
