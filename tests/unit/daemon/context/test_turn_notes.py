"""Which turns get the turn-close notes call, through the real `TurnRunner` and store.

A coding turn that ended normally gets one call, after `turn.finished`; a
general question, a failed or cancelled turn, or a session without a store gets
none, and a notes call that fails changes nothing the turn said.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from coding_harness.daemon.agent.model_errors import ModelServerError
from coding_harness.daemon.agent.seams import ModelReply, Usage
from coding_harness.daemon.context.turn_notes import transcript
from coding_harness.daemon.store.db import Store
from coding_harness.daemon.turns.runner import TurnRunner
from tests.support.notes_requests import NotesApart, is_notes_request
from tests.support.turn_harness import FakePool, TurnHarness, calls, say
from tests.support.waiting import until

NOTES = json.dumps({"decisions": [], "facts": ["The project has one file"], "todo": []})


def with_store(harness: TurnHarness, root: Path) -> Store:
    store = Store(root / "state" / "sessions.db")
    store.create_session(
        id=harness.session.id, cwd=str(harness.cwd), provider=None, model=None, created_at=0.0
    )
    harness.session.store = store
    return store


async def run(
    harness: TurnHarness, pool: FakePool, route: str, *, cancel: bool = False
) -> tuple[dict[str, Any], list[str]]:
    """One turn on `route`, then the notes call settled; the turn's end, and every event
    kind the session emitted after it."""
    runner = TurnRunner(configs=harness.configs, pool=pool, build_tools=_tools())
    try:
        started = runner.submit(
            harness.session, "look", auto_approve=True, dry_run=False, options={"route": route}
        )
        if cancel:
            await until(lambda: pool.model.asked, "the turn to wait for the stuck model")
            assert runner.cancel(harness.session)
        finished = await _finished(harness, str(started["turn"]))
        await runner.note_takers.settled()
        kinds = [e.kind for e in harness.session.events]
        return finished, kinds[kinds.index("turn.finished") + 1 :]
    finally:
        await runner.close()


class _Stuck:
    """A model that never answers, so the turn is still waiting when it is cancelled."""

    label = "stuck"

    def __init__(self) -> None:
        self.asked: list[Any] = []  # every payload it was sent

    async def complete(self, payload: Any, sink: Any) -> ModelReply:
        self.asked.append(payload)
        await asyncio.sleep(60)
        raise AssertionError("not cancelled")


def _tools() -> Any:
    from coding_harness.daemon.tools.builtin import build_tools

    return build_tools


async def _finished(harness: TurnHarness, turn: str) -> dict[str, Any]:
    for _ in range(2000):
        for event in harness.session.events:
            if event.kind == "turn.finished" and event.data["turn"] == turn:
                return dict(event.data)
        await asyncio.sleep(0.005)
    raise AssertionError("the turn did not finish")


def test_a_coding_turn_gets_one_notes_call_after_it_finished(tmp_path: Path) -> None:
    harness = TurnHarness(tmp_path, [calls(("list_dir", {"path": "."})), say("Done.")])
    store = with_store(harness, tmp_path)
    pool = FakePool(harness.model)
    pool.notes.script.append(
        ModelReply(content=NOTES, usage=Usage(prompt_tokens=30, completion_tokens=7))
    )
    finished, after = asyncio.run(run(harness, pool, "coding"))
    assert finished["exit_code"] == 0 and finished["usage"]["prompt_tokens"] == 0
    assert len(pool.notes.payloads) == 1 and after == ["usage"]
    asked = pool.notes.payloads[0]
    assert asked["max_tokens"] == 1024 and asked["response_format"]["type"] == "json_schema"
    assert [n.text for n in store.notes.read(str(harness.cwd))] == ["The project has one file"]
    assert harness.session.usage.prompt_tokens == 30


def test_general_failed_and_cancelled_turns_get_no_notes_call(tmp_path: Path) -> None:
    failure = ModelServerError("HTTP 503", endpoint="x", status=503, retryable=False)
    cases: list[tuple[str, list[Any], bool]] = [
        ("general", [say("Paris.")], False),
        ("coding", [failure], False),
        ("coding", [], True),
    ]
    for index, (route, replies, cancel) in enumerate(cases):
        root = tmp_path / str(index)
        root.mkdir()
        harness = TurnHarness(root, replies)
        with_store(harness, root)
        pool = FakePool(_Stuck() if cancel else harness.model)
        finished, _ = asyncio.run(run(harness, pool, route, cancel=cancel))
        assert finished["exit_code"] == (130 if cancel else 1 if route == "coding" else 0)
        assert pool.notes.payloads == [], route


def test_a_session_without_a_store_makes_no_notes_call(tmp_path: Path) -> None:
    harness = TurnHarness(tmp_path, [say("Done.")])
    pool = FakePool(harness.model)
    finished, _ = asyncio.run(run(harness, pool, "coding"))
    assert finished["exit_code"] == 0 and pool.notes.payloads == []


def test_a_failing_notes_call_is_no_notes_and_no_event(tmp_path: Path) -> None:
    harness = TurnHarness(tmp_path, [say("Done.")])
    store = with_store(harness, tmp_path)
    pool = FakePool(harness.model)
    pool.notes.script.append(ModelServerError("HTTP 500", endpoint="x", status=500))
    finished, after = asyncio.run(run(harness, pool, "coding"))
    assert finished["exit_code"] == 0 and finished["reply"] == "Done."
    assert len(pool.notes.payloads) == 1 and after == []
    assert store.notes.read(str(harness.cwd)) == []


def test_the_transcript_is_short_whatever_the_turn_read() -> None:
    messages = [
        {"role": "user", "content": "fix it"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "read_file", "arguments": json.dumps({"path": "a.py"})}}
        ]},
        {"role": "tool", "content": "x" * 50_000},
        {"role": "assistant", "content": "Fixed."},
    ] * 40  # fmt: skip
    text = transcript(messages)
    assert len(text) < 17_000 and text.startswith("USER: fix it")
    assert text.endswith("ASSISTANT: Fixed.") and "characters left out" in text


def test_no_notes_call_past_a_spending_limit(tmp_path: Path) -> None:
    costly = ModelReply(content="Done.", usage=Usage(prompt_tokens=1_000_000))  # $1.00
    harness = TurnHarness(tmp_path, [costly], agent={"spend_limit_session_usd": 1.0001})
    priced(harness)
    with_store(harness, tmp_path)
    pool = FakePool(harness.model)
    finished, _ = asyncio.run(run(harness, pool, "coding"))
    assert finished["exit_code"] == 0 and finished["cost_usd"] == 1.0
    assert pool.notes.payloads == []  # ~$0.001 more would pass the $1.0001 limit


def test_closing_the_runner_waits_for_the_cancelled_notes_call_to_end(tmp_path: Path) -> None:
    """The daemon closes its store right after the runner: a notes call still running
    then would write into a closed store."""
    harness = TurnHarness(tmp_path, [calls(("list_dir", {"path": "."})), say("Done.")])
    with_store(harness, tmp_path)
    pool = FakePool(harness.model)
    ended: list[str] = []

    class HangingNotes(NotesApart):
        async def complete(self, payload: dict[str, Any], sink: Any) -> Any:
            if not is_notes_request(payload):
                return await self.model.complete(payload, sink)
            self.payloads.append(payload)
            try:
                await asyncio.sleep(60)
            finally:
                ended.append("notes call ended")
            return ModelReply()

    pool.notes = HangingNotes(harness.model)

    async def scenario() -> list[str]:
        runner = TurnRunner(configs=harness.configs, pool=pool, build_tools=_tools())
        runner.submit(
            harness.session, "look", auto_approve=True, dry_run=False, options={"route": "coding"}
        )
        await until(lambda: pool.notes.payloads, "the notes call")
        await runner.close()
        return list(ended)  # as it stands when close() returns

    assert asyncio.run(scenario()) == ["notes call ended"]


def priced(harness: TurnHarness) -> None:
    """The harness's profile at $1 per million tokens, in and out."""
    config = json.loads((harness.home / ".coding_harness.json").read_text())
    config["providers"]["fake"]["pricing"] = {"input": 1.0, "output": 1.0}
    (harness.home / ".coding_harness.json").write_text(json.dumps(config))


def test_the_notes_call_counts_for_the_session_and_never_for_the_turn(tmp_path: Path) -> None:
    """`turn.finished` said the turn's own usage and cost; the notes call's `usage` event
    keeps `turn` at those totals, while the session's usage and cost and the store's rows
    (what stats.get, /tokens and the spending limits read) take the call in."""
    turn_usage = Usage(prompt_tokens=100_000, completion_tokens=20_000)
    harness = TurnHarness(tmp_path, [ModelReply(content="Done.", usage=turn_usage)])
    priced(harness)
    store = with_store(harness, tmp_path)
    pool = FakePool(harness.model)
    notes_usage = Usage(prompt_tokens=30_000, completion_tokens=7_000)
    pool.notes.script.append(ModelReply(content=NOTES, usage=notes_usage))
    finished, after = asyncio.run(run(harness, pool, "coding"))
    assert finished["usage"] == turn_usage.to_wire()
    assert finished["cost_usd"] == pytest.approx(0.12)
    assert after == ["usage"]
    (event,) = [e.data for e in harness.session.events if e.data.get("notes")]
    assert event["turn"] == finished["usage"]  # the turn's own calls only
    assert (event["prompt_tokens"], event["completion_tokens"]) == (30_000, 7_000)
    session = harness.session
    assert (session.usage.prompt_tokens, session.usage.completion_tokens) == (130_000, 27_000)
    assert session.cost_usd == event["session_cost_usd"] == pytest.approx(0.157)
    assert store.usage.session_cost(session.id) == pytest.approx(0.157)


def test_the_notes_call_leaves_the_conversation_as_the_turn_left_it(tmp_path: Path) -> None:
    """`session.history` (and so `/save`) and the stored messages hold the turn's messages:
    the notes call's prompt, transcript and answer are never among them."""
    harness = TurnHarness(tmp_path, [calls(("list_dir", {"path": "."})), say("Done.")])
    store = with_store(harness, tmp_path)
    pool = FakePool(harness.model)
    pool.notes.script.append(ModelReply(content=NOTES, usage=Usage(prompt_tokens=30)))
    asyncio.run(run(harness, pool, "coding"))
    assert len(pool.notes.payloads) == 1
    history = harness.session.history
    assert [m["role"] for m in history] == ["user", "assistant", "tool", "assistant"]
    assert history[-1]["content"] == "Done."
    assert "one file" not in json.dumps(history) and "<transcript>" not in json.dumps(history)
    (stored,) = store.load_sessions(100)
    assert stored.messages == history
