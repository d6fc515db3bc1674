"""Compaction in whole turns: before a call that would not fit, after a provider says it
did not fit, and on request, with what the scripted model is sent at each step."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from coding_harness.daemon.agent.model_errors import ModelContextExceeded, ModelRequestRejected
from coding_harness.daemon.agent.prompts import COMPACT_PROMPT
from coding_harness.daemon.agent.seams import JSONObject
from coding_harness.daemon.context.compactor import ACKNOWLEDGED, CONTINUE
from coding_harness.daemon.context.plan_book import PlanBook
from coding_harness.daemon.context.window import BRIEF_MARK
from coding_harness.daemon.store.db import Store
from tests.support.turn_harness import TurnHarness, calls, say

pytestmark = pytest.mark.usefixtures("home_in_tmp")


ENDPOINT = "https://models.example/v1"
SMALL = {"context_limit": 4_000}


def long_history() -> list[JSONObject]:
    return [
        {"role": "user", "content": "fix the bug in calc.py"},
        {"role": "assistant", "content": "I read it. " + "x" * 12_000},
        {"role": "user", "content": "and the tests"},
        {"role": "assistant", "content": "Working. " + "y" * 12_000},
    ]


def test_a_conversation_past_the_threshold_is_compacted_before_the_call(tmp_path: Path) -> None:
    box = TurnHarness(tmp_path, [say("Done: fixed add.\nLeft: tests."), say("On it.")], agent=SMALL)
    box.session.history = long_history()
    finished = box.turn("carry on")
    summary_call, real_call = box.model.payloads
    assert summary_call["messages"][0]["content"] == COMPACT_PROMPT
    assert "tools" not in summary_call
    assert "USER: fix the bug in calc.py" in summary_call["messages"][1]["content"]
    assert [m["role"] for m in real_call["messages"]] == ["system", "user"]
    brief = real_call["messages"][1]["content"]
    assert brief.startswith(BRIEF_MARK) and brief.endswith(CONTINUE)
    assert "Goal (the first request of this conversation):\nfix the bug in calc.py" in brief
    assert "Latest request:\ncarry on" in brief
    assert "Done: fixed add." in brief
    assert finished["reply"] == "On it."
    assert [m["role"] for m in box.session.history] == ["user", "assistant"]
    compacted = box.events("context.compacted")[0]
    assert compacted["reason"] == "auto" and compacted["messages_before"] == 5
    assert compacted["tokens_after"] < compacted["tokens_before"]
    assert any("context compacted (auto)" in n["message"] for n in box.events("notice"))


def test_a_context_error_compacts_and_retries_once(tmp_path: Path) -> None:
    too_big = ModelContextExceeded("context length exceeded", endpoint=ENDPOINT)
    box = TurnHarness(tmp_path, [too_big, say("summary"), say("Fine now.")])
    box.session.history = long_history()[:2]
    finished = box.turn("carry on")
    assert finished["exit_code"] == 0 and finished["reply"] == "Fine now."
    assert box.model.payloads[1]["messages"][0]["content"] == COMPACT_PROMPT
    assert box.model.payloads[2]["messages"][1]["content"].startswith(BRIEF_MARK)
    assert box.events("context.compacted")[0]["reason"] == "overflow"


def test_a_second_context_error_ends_the_turn(tmp_path: Path) -> None:
    too_big = ModelContextExceeded("context length exceeded", endpoint=ENDPOINT)
    box = TurnHarness(tmp_path, [too_big, say("summary"), too_big])
    box.session.history = long_history()[:2]
    finished = box.turn("carry on")
    assert finished["exit_code"] == 1 and "context length exceeded" in finished["reply"]


def test_nothing_to_compact_lets_the_error_through(tmp_path: Path) -> None:
    too_big = ModelContextExceeded("context length exceeded", endpoint=ENDPOINT)
    box = TurnHarness(tmp_path, [too_big])
    finished = box.turn("x" * 100)
    assert finished["exit_code"] == 1 and len(box.model.payloads) == 1


def test_without_a_summary_the_brief_keeps_what_the_transcript_shows(tmp_path: Path) -> None:
    refused = ModelRequestRejected("no", endpoint=ENDPOINT)
    replies = [
        calls(("commit_plan", {"steps": "Fix add files: calc.py\nAdd tests files: test_calc.py"})),
        calls(("propose_edit", {"path": "calc.py", "old": "", "new": "x = 1\n"})),
        say("Fixed."),
        refused,
        say("Continuing."),
    ]
    box = TurnHarness(tmp_path, replies, agent=SMALL)
    box.turn("fix calc.py")
    box.session.history += long_history()[1:2]
    box.turn("now the tests")
    brief = box.sent()["messages"][1]["content"]
    assert "(no summary: the model could not be asked)" in brief
    assert "Goal (the first request of this conversation):\nfix calc.py" in brief
    assert "1. [touched] Fix add (files: calc.py)" in brief
    assert (
        "- calc.py" in brief
        and "Left to do (plan steps not done):\n- Fix add\n- Add tests" in brief
    )
    assert any("no summary for the compacted context" in n["message"] for n in box.events("notice"))
    kept = PlanBook().current(box.session, box.session.history)  # as after a restart
    assert kept is not None and kept.steps[0].text == "Fix add"  # re-anchored to the brief
    assert box.events("plan")[-1]["carried_over"] is True


def test_compacting_on_request_replaces_the_stored_history(tmp_path: Path) -> None:
    box = TurnHarness(tmp_path, [say("Done: read calc.py.\nLeft: fix it.")])
    store = Store(tmp_path / "state" / "sessions.db")
    box.session.store = store
    store.create_session(
        id=box.session.id, cwd=str(box.cwd), provider=None, model=None, created_at=time.time()
    )
    box.session.history = long_history()
    store.record_step(box.session.id, first_index=0, messages=box.session.history, events=[])
    result = box.compact()
    assert result["compacted"] is True and result["reason"] == "manual"
    assert result["messages_before"] == 4 and result["messages_after"] == 2
    history = box.session.history
    assert history[0]["content"].startswith(BRIEF_MARK) and "Left: fix it." in history[0]["content"]
    assert history[1] == {"role": "assistant", "content": ACKNOWLEDGED}
    (stored,) = list(store.load_sessions(100))
    assert stored.messages == history
    assert "context.compacted" in [kind for _, kind, _, _ in stored.events]
    store.close()


def test_compacting_an_empty_conversation_does_nothing(tmp_path: Path) -> None:
    box = TurnHarness(tmp_path, [])
    assert box.compact() == {"compacted": False, "messages": 0}
    assert box.model.payloads == []
