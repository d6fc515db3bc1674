"""The loop's context keeper hooks, its no-tools answer, and the tool-list additions
(commit_plan offered with a plan keeper, JSON steps accepted, read-only subsets)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from coding_harness.daemon.agent.loop import AgentLoop, LoopSettings
from coding_harness.daemon.agent.model_errors import ModelContextExceeded
from coding_harness.daemon.agent.seams import JSONObject, ModelReply, ToolCall
from coding_harness.daemon.tools.builtin import READ_ONLY_TOOLS, build_tools
from coding_harness.daemon.tools.registry import OnlyTools
from tests.support.scripted_model import EchoTools, Recorder, ScriptedModel, call, run_loop
from tests.support.tool_context import make_ctx


class Keeper:
    """Compacts to a one-line brief whenever asked, and says it is over the limit once."""

    def __init__(self, over: bool = False, can_compact: bool = True) -> None:
        self.over = over
        self.can_compact = can_compact
        self.reasons: list[str] = []

    def over_limit(self, messages: list[JSONObject]) -> bool:
        over, self.over = self.over, False
        return over

    async def compact(self, messages: list[JSONObject], reason: str) -> bool:
        self.reasons.append(reason)
        if not self.can_compact:
            return False
        messages[1:] = [{"role": "user", "content": "BRIEF"}]
        return True


def test_the_keeper_compacts_before_a_call_that_would_not_fit() -> None:
    keeper = Keeper(over=True)
    run = run_loop([ModelReply(content="done")], context_keeper=keeper)
    assert keeper.reasons == ["auto"]
    assert run.model.payloads[0]["messages"][1:] == [{"role": "user", "content": "BRIEF"}]


def test_a_context_error_is_compacted_and_retried_once() -> None:
    keeper = Keeper()
    error = ModelContextExceeded("too long", endpoint="http://x")
    run = run_loop([error, ModelReply(content="done")], context_keeper=keeper)
    assert keeper.reasons == ["overflow"] and run.result.reply == "done"
    assert run.model.payloads[1]["messages"][-1] == {"role": "user", "content": "BRIEF"}


def test_without_anything_to_compact_the_context_error_propagates() -> None:
    keeper = Keeper(can_compact=False)
    error = ModelContextExceeded("too long", endpoint="http://x")
    try:
        run_loop([error], context_keeper=keeper)
    except ModelContextExceeded:
        pass
    else:
        raise AssertionError("expected the context error")
    assert keeper.reasons == ["overflow"]


def test_answer_is_one_call_without_tools() -> None:
    model = ScriptedModel([ModelReply(content="Paris.")])
    loop = AgentLoop(
        model=model,
        tools=EchoTools(),
        events=Recorder(),
        settings=LoopSettings(model_id="m", generation={"max_tokens": 50}),
        on_usage=lambda usage: None,
    )
    messages: list[JSONObject] = [{"role": "user", "content": "capital of France?"}]
    result = asyncio.run(loop.answer(messages))
    assert result.reply == "Paris." and "tools" not in model.payloads[0]
    assert messages[-1] == {"role": "assistant", "content": "Paris."}


class Plans:
    def __init__(self) -> None:
        self.committed: list[str] = []

    def commit(self, raw_steps: str) -> str:
        self.committed.append(raw_steps)
        return "plan recorded"

    def after_write(self, rel: str, text: str) -> str:
        return ""


def test_commit_plan_is_offered_with_a_plan_keeper_and_takes_json_steps(tmp_path: Path) -> None:
    bare, _ = make_ctx(tmp_path)
    assert "commit_plan" not in [s["function"]["name"] for s in build_tools(bare).schemas()]
    plans = Plans()
    ctx, _ = make_ctx(tmp_path, plans=plans)
    tools = build_tools(ctx)
    assert [s["function"]["name"] for s in tools.schemas()][-1] == "commit_plan"
    result = asyncio.run(
        tools.execute(ToolCall(id="1", name="commit_plan", arguments='{"steps": ["a", "b"]}'))
    )
    assert result == "plan recorded" and plans.committed == ['["a", "b"]']
    bad = asyncio.run(tools.execute(ToolCall(id="2", name="read_file", arguments='{"path": [1]}')))
    assert "must be a string, not an array" in bad  # other tools stay strict


def test_only_tools_offers_and_runs_a_subset(tmp_path: Path) -> None:
    ctx, _ = make_ctx(tmp_path)
    (tmp_path / "a.py").write_text("A\n")
    tools = OnlyTools(build_tools(ctx), READ_ONLY_TOOLS)
    offered = [name for name in READ_ONLY_TOOLS if name != "find_symbol"]  # no code index here
    assert [s["function"]["name"] for s in tools.schemas()] == offered
    assert asyncio.run(tools.execute(call(args='{"path": "a.py"}'))) == "A\n"
    refused = asyncio.run(tools.execute(call("run_shell", '{"command": "ls"}')))
    assert refused.startswith("Error: 'run_shell' is not available here")
