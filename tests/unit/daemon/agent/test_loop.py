"""The agent loop driven by a scripted model playing a weak one (fakes in tests/support)."""

from __future__ import annotations

import asyncio
from typing import Any

from coding_harness.daemon.agent.history import repair_dangling
from coding_harness.daemon.agent.loop import AgentLoop, LoopSettings
from coding_harness.daemon.agent.seams import JSONObject, ModelReply, Usage
from tests.support.scripted_model import EchoTools, Recorder, ScriptedModel, call


def run(
    replies: list[ModelReply], max_iterations: int = 20, generation: dict[str, Any] | None = None
):
    model, tools, events, usages = ScriptedModel(replies), EchoTools(), Recorder(), []
    loop = AgentLoop(
        model=model,
        tools=tools,
        events=events,
        settings=LoopSettings(
            model_id="m", generation=generation or {}, max_iterations=max_iterations
        ),
        on_usage=usages.append,
    )
    messages: list[JSONObject] = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "u"},
    ]
    result = asyncio.run(loop.run(messages))
    return result, messages, model, tools, events, usages


def test_tool_call_then_answer() -> None:
    replies = [
        ModelReply(
            content="Reading.",
            tool_calls=[call()],
            usage=Usage(prompt_tokens=5, completion_tokens=2),
        ),
        ModelReply(content="Done."),
    ]
    result, messages, model, _tools, events, usages = run(replies, generation={"temperature": 0.2})
    assert result.reply == "Done." and result.stopped is None
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert messages[3]["tool_call_id"] == "c1"
    assert model.payloads[0]["temperature"] == 0.2 and model.payloads[0]["tools"]
    assert "max_tokens" not in model.payloads[0]  # nothing defaulted in code
    kinds = [k for k, _ in events.events]
    assert kinds == ["text.delta", "tool.call", "tool.result", "text.delta"]
    assert usages == [Usage(prompt_tokens=5, completion_tokens=2)]


def test_same_call_twice_in_a_row_stops_the_turn() -> None:
    result, messages, _model, tools, _events, _ = run([ModelReply(tool_calls=[call()])] * 5)
    assert result.stopped == "repetition"
    assert len(tools.calls) == 1
    assert "repeating" in result.reply
    # The stopped batch still has results, so the history stays valid.
    assert repair_dangling(messages, "x") == 0


def test_three_times_in_five_stops_but_one_repeat_is_allowed() -> None:
    a, b, c = call(args='{"path": "a"}'), call(args='{"path": "b"}'), call(args='{"path": "c"}')
    script = [ModelReply(tool_calls=[x]) for x in (a, b, a, c, a)] + [ModelReply(content="never")]
    result, _m, _model, tools, _e, _ = run(script)
    assert result.stopped == "repetition"
    assert [t.arguments for t in tools.calls] == [
        a.arguments,
        b.arguments,
        a.arguments,
        c.arguments,
    ]


def test_iteration_cap_then_one_summary_call_without_tools() -> None:
    script = [
        ModelReply(tool_calls=[call(args=f'{{"path": "{i}"}}', id=f"c{i}")]) for i in range(3)
    ]
    script.append(ModelReply(content="Summary of work."))
    result, messages, model, _tools, _e, _ = run(script, max_iterations=3)
    assert result.stopped == "iteration_cap" and result.reply == "Summary of work."
    assert "tools" not in model.payloads[-1]
    assert messages[-1] == {"role": "assistant", "content": "Summary of work."}


def test_repair_dangling_answers_every_missing_call_in_place() -> None:
    messages: list[JSONObject] = [
        {"role": "user", "content": "u"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call(id="a").to_wire(), call(id="b").to_wire()],
        },
        {"role": "tool", "tool_call_id": "a", "name": "read_file", "content": "ok"},
    ]
    assert repair_dangling(messages, "interrupted") == 1
    assert [m.get("tool_call_id") for m in messages[2:]] == ["a", "b"]
    assert messages[3]["content"] == "interrupted"
