"""The token budget: a turn or a session over its budget stops after the model call."""

from __future__ import annotations

from coding_harness.daemon.agent.budget import SESSION_OVER, TURN_OVER
from coding_harness.daemon.agent.history import repair_dangling
from coding_harness.daemon.agent.seams import ModelReply, ToolCall, Usage
from tests.support.scripted_model import EchoTools, run_loop


def reading(i: int, prompt: int, completion: int = 10) -> ModelReply:
    call = ToolCall(id=f"r{i}", name="read_file", arguments=f'{{"path": "f{i}"}}')
    return ModelReply(
        tool_calls=[call], usage=Usage(prompt_tokens=prompt, completion_tokens=completion)
    )


def test_the_turn_stops_once_over_its_budget() -> None:
    tools = EchoTools()
    script: list[ModelReply | Exception] = [
        reading(0, 50),
        reading(1, 60),
        ModelReply(content="never"),
    ]
    done = run_loop(script, tools, settings={"turn_token_budget": 100})
    assert done.result.stopped == "budget"
    assert done.result.reply == (
        "Stopped: this turn has used 130 tokens, more than its budget of 100. The tool calls "
        "of the last reply were not run. Raise the budget, or continue with a narrower request."
    )
    assert done.result.reply == TURN_OVER.format(used=130, limit=100)
    assert [call.id for call in tools.calls] == ["r0"]  # the second reply's call never ran
    assert done.tool_results()[-1] == (
        "not run: the token budget was used up, so the turn was stopped"
    )
    assert repair_dangling(done.messages, "x") == 0
    notices = [data["message"] for kind, data in done.events.events if kind == "notice"]
    assert notices == [done.result.reply]


def test_the_session_budget_comes_from_the_callable() -> None:
    used = [900]

    def session_tokens() -> tuple[int, int | None]:
        used[0] += 100  # the runner counts this turn's calls into the session, too
        return used[0], 1000

    script: list[ModelReply | Exception] = [reading(0, 5), reading(1, 5), ModelReply(content="x")]
    done = run_loop(script, session_tokens=session_tokens)
    assert done.result.stopped == "budget"
    assert done.result.reply == SESSION_OVER.format(used=1100, limit=1000)
    assert done.result.reply.startswith("Stopped: this session has used 1,100 tokens")
    assert len(done.model.payloads) == 2


def test_no_session_budget_means_no_limit() -> None:
    script: list[ModelReply | Exception] = [reading(0, 10**6), ModelReply(content="done")]
    done = run_loop(script, session_tokens=lambda: (10**9, None))
    assert done.result.reply == "done"


def test_a_final_answer_is_kept_even_over_budget() -> None:
    script: list[ModelReply | Exception] = [
        ModelReply(content="the answer", usage=Usage(prompt_tokens=500, completion_tokens=5))
    ]
    done = run_loop(script, settings={"turn_token_budget": 10})
    assert done.result.reply == "the answer"
    assert done.result.stopped is None


def test_replies_without_usage_cost_nothing() -> None:
    script: list[ModelReply | Exception] = [
        ModelReply(tool_calls=[ToolCall(id="a", name="read_file", arguments='{"path": "a"}')]),
        ModelReply(content="done"),
    ]
    assert run_loop(script, settings={"turn_token_budget": 1}).result.reply == "done"
