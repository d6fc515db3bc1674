"""A compaction's brief quotes a huge request cut, never whole (issue 31, item 15):
otherwise every later request would carry it again."""

from __future__ import annotations

import asyncio

from coding_harness.daemon.agent.seams import JSONObject, ModelReply
from coding_harness.daemon.context.compactor import QUOTE_CHARS, Compactor
from tests.support.scripted_model import Recorder, ScriptedModel

HUGE = "x" * 2_000_000


def test_a_two_megabyte_request_is_quoted_cut_in_the_brief() -> None:
    compactor = Compactor(
        model=ScriptedModel([ModelReply(content="the summary")]),
        model_id="m",
        generation={},
        limit=32_000,
        threshold=0.8,
        events=Recorder(),
        on_usage=lambda usage: None,
    )
    messages: list[JSONObject] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "please look at this:\n" + HUGE},
        {"role": "assistant", "content": "It is too long."},
        {"role": "user", "content": "then just say hello"},
    ]
    assert asyncio.run(compactor.compact(messages, "manual", mid_turn=False))
    brief = str(messages[1]["content"])
    assert len(brief) < 3 * QUOTE_CHARS
    assert "please look at this" in brief and "more characters of this request left out" in brief
    assert "then just say hello" in brief
