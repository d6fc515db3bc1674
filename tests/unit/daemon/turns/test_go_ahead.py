"""A submitted turn waits for its go-ahead (the submit's answer written): a close or a
cancel meanwhile ends it unstarted, with its turn.finished; a queued turn refreshes
the code index itself."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from coding_harness.daemon.turns.runner import TurnRunner
from tests.support.turn_harness import TurnHarness, say

pytestmark = pytest.mark.usefixtures("home_in_tmp")


def _held(box: TurnHarness, runner: TurnRunner) -> tuple[dict[str, Any], Callable[[], None]]:
    """Submit a turn whose go-ahead is held; returns the answer and the go-ahead."""
    given: list[Callable[[], None]] = []
    answer = runner.submit(
        box.session, "fix it", auto_approve=True, dry_run=False, release=given.append
    )
    return answer, given[0]


def _finished(box: TurnHarness, turn: str) -> list[dict[str, Any]]:
    return [
        e.data for e in box.session.events if e.kind == "turn.finished" and e.data["turn"] == turn
    ]


def test_a_session_closed_before_the_go_ahead_ends_the_turn_unstarted(tmp_path: Path) -> None:
    box = TurnHarness(tmp_path, [say("never")])

    async def scenario() -> list[dict[str, Any]]:
        runner = box._runner()
        answer, go = _held(box, runner)
        await asyncio.sleep(0.05)  # the worker took it and waits
        assert runner.running() == 1
        runner.forget(box.session)
        go()
        await asyncio.sleep(0.05)
        await runner.close()
        return _finished(box, answer["turn"])

    [finished] = asyncio.run(scenario())
    assert finished["reply"] == "(not started: the session was closed)"
    assert box.model.payloads == []


def test_a_cancel_before_the_go_ahead_is_a_cancel(tmp_path: Path) -> None:
    box = TurnHarness(tmp_path, [say("never"), say("the next one runs")])

    async def scenario() -> tuple[bool, list[dict[str, Any]], dict[str, Any]]:
        runner = box._runner()
        answer, go = _held(box, runner)
        await asyncio.sleep(0.05)
        cancelled = runner.cancel(box.session)
        go()
        await asyncio.sleep(0.05)
        after = runner.submit(box.session, "again", auto_approve=True, dry_run=False)
        done = await box._finished(after["turn"])
        await runner.close()
        return cancelled, _finished(box, answer["turn"]), done

    cancelled, [finished], after = asyncio.run(scenario())
    assert cancelled is True
    assert finished["reply"] == "(cancelled)" and finished["exit_code"] == 130
    assert after["reply"] == "never"  # the cancelled turn never called the model


def test_only_a_turn_submitted_to_an_idle_session_takes_the_submits_refresh(
    tmp_path: Path,
) -> None:
    box = TurnHarness(tmp_path, [say("one"), say("two")])

    async def scenario() -> list[Any]:
        runner = box._runner()
        seen: list[Any] = []
        first, go_first = _held(box, runner)
        second, go_second = _held(box, runner)
        assert (first["queued"], second["queued"]) == (False, True)
        queued = list(runner._lanes[box.session.id].queue._queue)  # type: ignore[attr-defined]
        seen.extend(request.map_fresh_since for request in queued)
        go_first()
        go_second()
        await box._finished(second["turn"])
        await runner.close()
        return seen

    first_since, second_since = asyncio.run(scenario())
    assert isinstance(first_since, float)  # a refresh begun after it counts
    assert second_since is None  # after other turns: refresh again
