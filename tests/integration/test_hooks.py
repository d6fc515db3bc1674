"""Hooks end to end: the real `harness` command, a real daemon, the fake model, /bin/sh hooks.

A PreToolUse hook that exits 2 keeps a run_shell from running (a Makefile
target that would leave a marker) and the model's next request carries the
hook's stderr as the call's result; a PostToolUse hook writes the JSON it read
to a file the test reads; Claude Code's nested form works the same; a
UserPromptSubmit hook that exits 2 refuses the task before the model is asked;
a project file's hooks run only once the project is trusted.
"""

from __future__ import annotations

import json
from typing import Any

from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.mcp_setup import of_kind, stream_events, tool_results
from tests.support.oneshot import harness

MAKEFILE = "mark:\n\t@touch ran-mark\n\t@echo marked\n"
BLOCKER = "echo 'run_shell is off today: ask the user' >&2; exit 2"


def use_hooks(sandbox: Sandbox, hooks: dict[str, Any]) -> None:
    """Set `hooks` in the sandbox's global config (the model's profile stays)."""
    path = sandbox.home / ".coding_harness.json"
    config = json.loads(path.read_text())
    config["hooks"] = hooks
    path.write_text(json.dumps(config))


def run_streamed(sandbox: Sandbox, *flags: str) -> tuple[int, list[dict[str, Any]], str]:
    result = harness(sandbox, *flags, "--output-format", "stream-json", "-p", "go", input="")
    return result.returncode, stream_events(result.stdout), result.stderr


def shell_then_done(model: FakeModelServer, command: str = "make mark") -> None:
    model.add(Reply(tool_calls=[tool_call("run_shell", command=command)]), Reply(content="done"))


def test_a_pre_tool_use_hook_exiting_2_blocks_run_shell_and_the_model_sees_why(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    (sandbox.workspace / "Makefile").write_text(MAKEFILE)
    use_hooks(sandbox, {"PreToolUse": [{"matcher": "run_shell|propose_edit", "command": BLOCKER}]})
    shell_then_done(model)
    code, events, stderr = run_streamed(sandbox)
    assert code == 0, stderr
    assert not (sandbox.workspace / "ran-mark").exists()
    [result] = tool_results(model)
    assert "run_shell is off today: ask the user" in result and "did not run" in result
    [hook] = of_kind(events, "hook")
    assert hook["event"] == "PreToolUse" and hook["command"] == BLOCKER
    assert hook["exit_code"] == 2 and hook["blocked"] is True
    assert "run_shell is off today" in hook["output"]


def test_claude_codes_nested_form_blocks_the_same(sandbox: Sandbox, model: FakeModelServer) -> None:
    (sandbox.workspace / "Makefile").write_text(MAKEFILE)
    nested = {"matcher": "run_shell", "hooks": [{"type": "command", "command": BLOCKER}]}
    use_hooks(sandbox, {"PreToolUse": [nested]})
    shell_then_done(model)
    code, _, stderr = run_streamed(sandbox)
    assert code == 0, stderr
    assert not (sandbox.workspace / "ran-mark").exists()
    assert "run_shell is off today" in tool_results(model)[0]


def test_a_post_tool_use_hook_sees_the_call_and_its_result(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    (sandbox.workspace / "Makefile").write_text(MAKEFILE)
    seen = sandbox.root / "post.json"
    use_hooks(sandbox, {"PostToolUse": [{"matcher": "run_shell", "command": f"cat > '{seen}'"}]})
    shell_then_done(model)
    code, events, stderr = run_streamed(sandbox, "-y")  # a make target other than check asks
    assert code == 0, stderr
    assert (sandbox.workspace / "ran-mark").exists()
    data = json.loads(seen.read_text())
    assert data["hook_event_name"] == "PostToolUse"
    assert data["tool_name"] == "run_shell"
    assert data["tool_input"] == {"command": "make mark"}
    assert "marked" in data["tool_response"]
    assert data["cwd"] == str(sandbox.workspace.resolve())
    assert data["session_id"] == events[0]["session"]
    assert of_kind(events, "hook")[0]["blocked"] is False


def test_a_user_prompt_submit_hook_exiting_2_refuses_the_task(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    refuse = "grep -q deploy && echo 'no deploys from the agent' >&2 && exit 2; exit 0"
    use_hooks(sandbox, {"UserPromptSubmit": [{"command": refuse}]})
    result = harness(sandbox, "-p", "deploy the app", input="")
    assert result.returncode == 1
    assert "no deploys from the agent" in result.stderr
    assert model.requests == []
    model.add(Reply(content="fixed"))
    result = harness(sandbox, "-p", "fix the bug", input="")
    assert result.returncode == 0, result.stderr
    sent = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "user"]
    assert not any("deploy the app" in text for text in sent)


def test_an_untrusted_projects_hooks_do_not_run_until_trusted(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    marker = sandbox.root / "project-hook-ran"
    hooks = {"UserPromptSubmit": [{"command": f"touch '{marker}'"}]}
    (sandbox.workspace / ".local_coding_harness.json").write_text(json.dumps({"hooks": hooks}))
    model.add(Reply(content="hello"))
    result = harness(sandbox, "-p", "hello", input="")
    assert result.returncode == 0, result.stderr
    assert not marker.exists()

    trusted = harness(sandbox, "trust", "-y")
    assert trusted.returncode == 0, trusted.stderr
    model.add(Reply(content="hello again"))
    result = harness(sandbox, "-p", "hello", input="")
    assert result.returncode == 0, result.stderr
    assert marker.exists()


def test_a_hook_that_asks_puts_the_call_to_the_user_even_under_yes(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    (sandbox.workspace / "Makefile").write_text(MAKEFILE)
    ask = {"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "odd"}}
    use_hooks(sandbox, {"PreToolUse": [{"command": f"echo '{json.dumps(ask)}'"}]})
    shell_then_done(model)
    result = harness(sandbox, "-y", "--output-format", "stream-json", "-p", "go", input="n\n")
    assert result.returncode == 0, result.stderr
    events = stream_events(result.stdout)
    [asked] = of_kind(events, "approval.requested")
    assert "a hook asks you to confirm" in asked["summary"] and "make mark" in asked["summary"]
    assert not (sandbox.workspace / "ran-mark").exists()
    assert "declined" in tool_results(model)[0]


def test_hook_runs_reach_the_debug_log(sandbox: Sandbox, model: FakeModelServer) -> None:
    use_hooks(sandbox, {"PreToolUse": [{"command": "echo checked >&2"}]})
    model.add(Reply(tool_calls=[tool_call("list_dir", path=".")]), Reply(content="done"))
    result = harness(sandbox, "--debug", "-p", "look", input="")
    assert result.returncode == 0, result.stderr
    [log] = (sandbox.root / "state" / "coding-harness" / "debug").glob("*.jsonl")
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    [run] = [line for line in lines if line.get("hook") == "PreToolUse"]
    assert run["stderr"] == "checked\n" and run["exit_code"] == 0
    assert run["stdin"]["tool_name"] == "list_dir"
