"""HookedTools around a recording executor, and the turn's UserPromptSubmit and Stop hooks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coding_harness.daemon.agent.loop import LoopResult
from coding_harness.daemon.agent.seams import JSONObject, ToolCall
from coding_harness.daemon.config.hook_settings import HookSettings, HookSpec
from coding_harness.daemon.hooks.answers import HookHalt
from coding_harness.daemon.hooks.runner import HookRunner
from coding_harness.daemon.hooks.tools import HookedTools
from coding_harness.daemon.hooks.turn_hooks import MAX_CONTINUES, prompt_context, until_stopped
from coding_harness.daemon.tools.shell.process import tool_environment
from coding_harness.protocol.methods import EventKind
from tests.support.scripted_model import EchoTools
from tests.support.tool_context import RecordingSink, ScriptedApprover, run


def runner(tmp_path: Path, *specs: HookSpec) -> HookRunner:
    return HookRunner(
        settings=HookSettings(hooks=specs),
        session="s-1",
        cwd=tmp_path,
        env=tool_environment(),
        events=RecordingSink(),
    )


class ShellTools(EchoTools):
    """EchoTools offering run_shell and propose_edit."""

    def schemas(self) -> list[JSONObject]:
        names = ("run_shell", "propose_edit")
        return [{"type": "function", "function": {"name": n, "parameters": {}}} for n in names]


def shell_call() -> ToolCall:
    return ToolCall(id="c1", name="run_shell", arguments='{"command": "make check"}')


def hooked(
    tmp_path: Path, *specs: HookSpec, approver: ScriptedApprover | None = None
) -> tuple[ShellTools, HookedTools]:
    inner = ShellTools()
    return inner, HookedTools(inner, runner(tmp_path, *specs), approver or ScriptedApprover())


def test_a_blocked_call_never_reaches_the_tool_and_the_model_gets_why(tmp_path: Path) -> None:
    spec = HookSpec(event="PreToolUse", matcher="run_shell", command="echo 'CI only' >&2; exit 2")
    inner, tools = hooked(tmp_path, spec)
    result = run(tools.execute(shell_call()))
    assert inner.calls == []
    assert "did not run" in result and "CI only" in result


def test_a_hook_for_another_tool_leaves_the_call_alone(tmp_path: Path) -> None:
    spec = HookSpec(event="PreToolUse", matcher="propose_edit", command="exit 2")
    inner, tools = hooked(tmp_path, spec)
    assert run(tools.execute(shell_call())) == 'result of run_shell {"command": "make check"}'
    assert len(inner.calls) == 1


def test_a_tool_name_the_model_made_up_meets_no_hook(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    inner, tools = hooked(tmp_path, HookSpec(event="PreToolUse", command=f"touch '{marker}'"))
    made_up = ToolCall(id="c2", name="(a+)+" + "a" * 5000, arguments="{}")
    run(tools.execute(made_up))
    assert not marker.exists() and len(inner.calls) == 1
    run(tools.execute(shell_call()))
    assert marker.exists()


def test_post_tool_use_sees_the_result_and_adds_to_it(tmp_path: Path) -> None:
    seen = tmp_path / "post.json"
    context = {"hookSpecificOutput": {"additionalContext": "remember the linter"}}
    spec = HookSpec(event="PostToolUse", command=f"cat > '{seen}'; echo '{json.dumps(context)}'")
    _, tools = hooked(tmp_path, spec)
    result = run(tools.execute(shell_call()))
    data = json.loads(seen.read_text())
    assert data["tool_response"] == 'result of run_shell {"command": "make check"}'
    assert data["tool_input"] == {"command": "make check"} and data["tool_use_id"] == "c1"
    assert result.endswith("[PostToolUse hook context] remember the linter")


def test_ask_puts_the_call_to_the_user(tmp_path: Path) -> None:
    ask = {"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "odd"}}
    spec = HookSpec(event="PreToolUse", command=f"echo '{json.dumps(ask)}'")
    approver = ScriptedApprover(("no", "not now"))
    inner, tools = hooked(tmp_path, spec, approver=approver)
    result = run(tools.execute(shell_call()))
    assert inner.calls == [] and "declined" in result and "not now" in result
    assert "a hook asks you to confirm" in approver.requests[0].summary
    approver.answers.append(("yes", ""))
    run(tools.execute(shell_call()))
    assert len(inner.calls) == 1


def test_continue_false_ends_the_turn(tmp_path: Path) -> None:
    stop = {"continue": False, "stopReason": "quota"}
    spec = HookSpec(event="PreToolUse", command=f"echo '{json.dumps(stop)}'")
    inner, tools = hooked(tmp_path, spec)
    with pytest.raises(HookHalt, match="quota"):
        run(tools.execute(shell_call()))
    assert inner.calls == []


def test_a_refused_prompt_raises_with_stderr_and_context_is_returned(tmp_path: Path) -> None:
    command = "grep -q secret && echo 'no secrets' >&2 && exit 2; echo 'on branch main'"
    refuse = HookSpec(event="UserPromptSubmit", command=command)
    hooks = runner(tmp_path, refuse)
    with pytest.raises(HookHalt, match="no secrets") as caught:
        run(prompt_context(hooks, "print the secret"))
    assert caught.value.prompt_refused
    assert run(prompt_context(hooks, "fix the bug")) == "on branch main"


class CountingLoop:
    def __init__(self) -> None:
        self.runs = 0

    async def run(self, messages: list[JSONObject]) -> LoopResult:
        self.runs += 1
        messages.append({"role": "assistant", "content": f"reply {self.runs}"})
        return LoopResult(reply=f"reply {self.runs}")


def test_a_stop_hook_asks_to_continue_a_few_times_at_most(tmp_path: Path) -> None:
    spec = HookSpec(event="Stop", command="echo 'tests are red' >&2; exit 2")
    hooks = runner(tmp_path, spec)
    loop, working = CountingLoop(), [{"role": "system", "content": ""}]
    result = run(until_stopped(loop, working, hooks))
    assert loop.runs == MAX_CONTINUES + 1
    assert result.reply == f"reply {MAX_CONTINUES + 1}"
    asked = [m["content"] for m in working if m["role"] == "user"]
    assert len(asked) == MAX_CONTINUES and "tests are red" in asked[0]
    assert isinstance(hooks.events, RecordingSink)
    assert "ended after" in hooks.events.of_kind(EventKind.NOTICE)[-1]["message"]


def test_a_stop_hook_that_lets_it_end_runs_once(tmp_path: Path) -> None:
    seen = tmp_path / "stop.json"
    hooks = runner(tmp_path, HookSpec(event="Stop", command=f"cat > '{seen}'"))
    loop = CountingLoop()
    assert run(until_stopped(loop, [], hooks)).reply == "reply 1"
    data = json.loads(seen.read_text())
    assert data["stop_hook_active"] is False and data["last_assistant_message"] == "reply 1"
