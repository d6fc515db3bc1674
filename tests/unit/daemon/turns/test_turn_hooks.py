"""Hooks in whole turns through the real `TurnRunner` over a scripted model.

A refused prompt ends the turn with exit code 1 and an `error`, and leaves no
trace in the history; a prompt hook's output reaches the model; a Stop hook
makes the agent go on once; `"continue": false` from a PreToolUse hook ends the
turn with every call answered, and the session takes the next turn.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.turn_harness import TurnHarness, calls, say

pytestmark = pytest.mark.usefixtures("home_in_tmp")


def with_hooks(harness: TurnHarness, hooks: dict[str, Any]) -> None:
    path = harness.home / ".coding_harness.json"
    config = json.loads(path.read_text())
    config["hooks"] = hooks
    path.write_text(json.dumps(config))


def user_texts(payload: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in payload["messages"] if m["role"] == "user"]


def test_a_refused_prompt_ends_the_turn_and_is_not_kept(tmp_path: Path) -> None:
    harness = TurnHarness(tmp_path, [say("hello")])
    refuse = "grep -q rm && echo 'no deleting' >&2 && exit 2; exit 0"
    with_hooks(harness, {"UserPromptSubmit": [{"command": refuse}]})
    finished = harness.turn("rm the tests")
    assert finished["exit_code"] == 1
    assert "no deleting" in finished["reply"]
    [error] = harness.events("error")
    assert error["kind"] == "hook" and "no deleting" in error["message"]
    assert harness.session.history == []
    assert harness.model.payloads == []
    assert harness.turn("say hello")["exit_code"] == 0
    assert not any("rm the tests" in text for text in user_texts(harness.sent()))


def test_what_a_prompt_hook_prints_reaches_the_model(tmp_path: Path) -> None:
    harness = TurnHarness(tmp_path, [say("ok")])
    with_hooks(harness, {"UserPromptSubmit": [{"command": "echo 'the branch is main'"}]})
    assert harness.turn("what branch?")["exit_code"] == 0
    assert user_texts(harness.sent())[-1].endswith("\n\nthe branch is main")


def test_a_stop_hook_makes_the_agent_go_on_once(tmp_path: Path) -> None:
    harness = TurnHarness(tmp_path, [say("first answer"), say("second answer")])
    once = tmp_path / "asked-once"
    stop = f"test -e '{once}' && exit 0; touch '{once}'; echo 'run the tests first' >&2; exit 2"
    with_hooks(harness, {"Stop": [{"command": stop}]})
    finished = harness.turn("fix it", route="coding")
    assert finished["reply"] == "second answer"
    assert "run the tests first" in user_texts(harness.sent())[-1]
    assert [h["blocked"] for h in harness.events("hook")] == [True, False]


def test_continue_false_mid_turn_ends_it_with_every_call_answered(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "a.txt").write_text("a\n")
    reply = calls(("read_file", {"path": "a.txt"}), ("list_dir", {"path": "."}))
    harness = TurnHarness(tmp_path, [reply, say("next turn")])
    halt = json.dumps({"continue": False, "stopReason": "the hook says stop"})
    with_hooks(harness, {"PreToolUse": [{"matcher": "list_dir", "command": f"echo '{halt}'"}]})
    finished = harness.turn("look around", route="coding")
    assert finished["exit_code"] == 1 and finished["reply"] == "the hook says stop"
    history = harness.session.history
    answered = {m.get("tool_call_id") for m in history if m["role"] == "tool"}
    assert answered == {"c0", "c1"}
    assert "a hook ended the turn" in str(history[-1]["content"])
    with_hooks(harness, {})
    assert harness.turn("again", route="coding")["reply"] == "next turn"
