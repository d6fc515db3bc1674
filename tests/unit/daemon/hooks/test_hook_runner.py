"""HookRunner with real `/bin/sh` commands: stdin, exit codes, JSON answers, limits, events."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from coding_harness.daemon.agent.seams import JSONObject
from coding_harness.daemon.config.hook_settings import HookSettings, HookSpec
from coding_harness.daemon.hooks.answers import HookAnswer
from coding_harness.daemon.hooks.runner import HookRunner
from coding_harness.daemon.hooks.spawn import run_hook_command
from coding_harness.daemon.tools.shell.process import tool_environment
from coding_harness.protocol.methods import EventKind
from tests.support.tool_context import (
    RecordingSink,
    process_gone,
    read_pid,
    run,
    wait_for_file,
)


def runner(tmp_path: Path, *specs: HookSpec, env: dict[str, str] | None = None) -> HookRunner:
    return HookRunner(
        settings=HookSettings(hooks=specs),
        session="s-1",
        cwd=tmp_path,
        env=env if env is not None else tool_environment(),
        events=RecordingSink(),
        redact=lambda text: text.replace("hunter2", "[redacted]"),
    )


def pre(command: str, matcher: str = "", timeout: float = 10.0) -> HookSpec:
    return HookSpec(event="PreToolUse", command=command, matcher=matcher, timeout=timeout)


def sink(hooks: HookRunner) -> RecordingSink:
    assert isinstance(hooks.events, RecordingSink)
    return hooks.events


def fire(
    hooks: HookRunner, event: str = "PreToolUse", tool: str | None = "run_shell"
) -> HookAnswer:
    fields = {"tool_name": tool, "tool_input": {"command": "make check"}} if tool else {}
    return run(hooks.run(event, fields, tool))


def test_the_event_arrives_as_json_on_stdin_in_the_workspace(tmp_path: Path) -> None:
    out = tmp_path / "seen.json"
    hooks = runner(tmp_path, pre(f"cat > '{out}'; pwd > '{tmp_path}/cwd'"))
    answer = fire(hooks)
    assert not answer.blocked and not answer.failures
    seen = json.loads(out.read_text())
    assert seen["session_id"] == "s-1" and seen["session"] == "s-1"
    assert seen["cwd"] == str(tmp_path)
    assert seen["hook_event_name"] == "PreToolUse"
    assert seen["tool_name"] == "run_shell"
    assert seen["tool_input"] == {"command": "make check"}
    assert (tmp_path / "cwd").read_text().strip() == str(tmp_path.resolve())
    [event] = sink(hooks).of_kind(EventKind.HOOK)
    assert event == {
        "event": "PreToolUse",
        "command": pre(f"cat > '{out}'; pwd > '{tmp_path}/cwd'").command,
        "exit_code": 0,
        "blocked": False,
        "output": "",
    }


def test_exit_2_blocks_with_stderr_as_the_reason(tmp_path: Path) -> None:
    hooks = runner(tmp_path, pre("echo 'no make today' >&2; echo ignored; exit 2"))
    answer = fire(hooks)
    assert answer.blocked
    assert answer.reason == "no make today"
    [event] = sink(hooks).of_kind(EventKind.HOOK)
    assert event["blocked"] is True and event["exit_code"] == 2
    assert "no make today" in event["output"]


def test_another_exit_code_is_a_notice_and_the_call_goes_on(tmp_path: Path) -> None:
    hooks = runner(tmp_path, pre("echo 'hunter2 broke' >&2; exit 3"))
    answer = fire(hooks)
    assert not answer.blocked
    [notice] = sink(hooks).of_kind(EventKind.NOTICE)
    assert "exited with 3" in notice["message"]
    assert "[redacted] broke" in notice["message"] and "hunter2" not in notice["message"]


def test_json_answers_are_read_as_claude_code_reads_them(tmp_path: Path) -> None:
    deny = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "use the test target",
        }
    }
    assert fire(runner(tmp_path, pre(f"echo '{json.dumps(deny)}'"))).reason == "use the test target"
    ask = {"hookSpecificOutput": {"permissionDecision": "ask"}}
    answer = fire(runner(tmp_path, pre(f"echo '{json.dumps(ask)}'")))
    assert answer.ask and not answer.blocked
    allow = {"hookSpecificOutput": {"permissionDecision": "allow", "additionalContext": "ok"}}
    answer = fire(runner(tmp_path, pre(f"echo '{json.dumps(allow)}'")))
    assert not answer.blocked and not answer.ask and answer.added_context == "ok"
    block = {"decision": "block", "reason": "not that file"}
    answer = fire(runner(tmp_path, pre(f"echo '{json.dumps(block)}'")))
    assert answer.blocked and answer.reason == "not that file"
    stop = {"continue": False, "stopReason": "budget reached"}
    assert fire(runner(tmp_path, pre(f"echo '{json.dumps(stop)}'"))).halt == "budget reached"


def test_plain_output_is_context_for_a_prompt_only(tmp_path: Path) -> None:
    prompt = HookSpec(event="UserPromptSubmit", command="echo 'branch: main'")
    answer = fire(runner(tmp_path, prompt), "UserPromptSubmit", None)
    assert answer.added_context == "branch: main"
    assert fire(runner(tmp_path, pre("echo 'branch: main'"))).added_context == ""


def test_only_matching_hooks_run_and_their_answers_merge(tmp_path: Path) -> None:
    hooks = runner(
        tmp_path,
        pre("echo one >&2; exit 2", matcher="run_shell"),
        pre("echo two >&2; exit 2", matcher="propose_edit"),
        pre("echo three >&2; exit 2"),
    )
    answer = fire(hooks)
    assert answer.reason == "one\nthree"
    assert len(sink(hooks).of_kind(EventKind.HOOK)) == 2


def test_a_hook_past_its_time_is_killed_with_what_it_started(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    hooks = runner(tmp_path, pre(f"sleep 60 & echo $! > '{pid_file}'; wait", timeout=0.5))
    answer = fire(hooks)
    assert not answer.blocked
    assert "ran out of time (0.5 s)" in answer.failures[0]
    [event] = sink(hooks).of_kind(EventKind.HOOK)
    assert event["exit_code"] is None
    assert process_gone(read_pid(pid_file))


def test_the_daemons_keys_stay_out_of_a_hooks_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-daemon")
    monkeypatch.setenv("DATABASE_URL", "postgres://secret")
    out = tmp_path / "env.txt"
    env = tool_environment(drop={"OPENAI_API_KEY"})
    run(runner(tmp_path, pre(f"env > '{out}'"), env=env).run("PreToolUse", {}, "run_shell"))
    seen = out.read_text()
    assert "sk-daemon" not in seen and "postgres://secret" not in seen
    assert f"PATH={os.environ['PATH']}" in seen


def test_a_hook_that_ignores_stdin_and_floods_stdout_is_capped(tmp_path: Path) -> None:
    big = b"x" * 1_000_000
    result = run(
        run_hook_command(
            "head -c 300000 /dev/zero | tr '\\0' y",
            big,
            cwd=tmp_path,
            env=tool_environment(),
            limit=10,
            cap=1000,
        )
    )
    assert result.exit_code == 0
    assert len(result.stdout) < 1100 and "characters omitted" in result.stdout


def test_a_command_that_cannot_start_is_a_failure_not_an_exception(tmp_path: Path) -> None:
    result = run(
        run_hook_command("true", b"", cwd=tmp_path / "gone", env=tool_environment(), limit=5)
    )
    assert result.exit_code is None and result.start_error


def test_a_cancelled_turn_kills_a_running_hook(tmp_path: Path) -> None:
    pid_file = tmp_path / "hook.pid"
    hooks = runner(tmp_path, pre(f"echo $$ > '{pid_file}'; sleep 60", timeout=60))

    async def cancel_while_it_runs() -> None:
        task = asyncio.create_task(hooks.run("PreToolUse", {}, "run_shell"))
        await wait_for_file(pid_file)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(cancel_while_it_runs())
    assert process_gone(read_pid(pid_file))


class DebugLines:
    def __init__(self) -> None:
        self.entries: list[JSONObject] = []

    def write(self, entry: JSONObject) -> None:
        self.entries.append(entry)


def test_each_run_goes_to_the_debug_log_when_it_is_on(tmp_path: Path) -> None:
    hooks = runner(tmp_path, pre("echo out; echo err >&2; exit 2"))
    hooks.debug = DebugLines()
    fire(hooks)
    [entry] = hooks.debug.entries
    assert entry["hook"] == "PreToolUse" and entry["exit_code"] == 2
    assert entry["stdout"] == "out\n" and entry["stderr"] == "err\n"
    assert entry["stdin"]["tool_input"] == {"command": "make check"}


def test_what_a_hook_says_back_is_redacted_before_anyone_sees_it(tmp_path: Path) -> None:
    context = {"hookSpecificOutput": {"additionalContext": "token hunter2"}}
    hooks = runner(
        tmp_path,
        pre("echo 'key hunter2 refused' >&2; exit 2 # hunter2"),
        pre(f"echo '{json.dumps(context)}'"),
    )
    answer = fire(hooks)
    assert answer.reason == "key [redacted] refused"
    assert answer.added_context == "token [redacted]"
    shown = json.dumps(sink(hooks).events)
    assert "hunter2" not in shown and "[redacted]" in shown
