"""Measuring the context and writing the resume brief (no model involved)."""

from __future__ import annotations

import json

from coding_harness.daemon.agent.seams import JSONObject
from coding_harness.daemon.context.window import (
    BRIEF_MARK,
    context_table,
    files_changed,
    goal_of,
    latest_request,
    message_chars,
    preview,
    resume_brief,
    tokens,
    transcript,
)


def edit_call(call_id: str, name: str, path: str) -> JSONObject:
    arguments = json.dumps({"path": path, "old": "", "new": "x"})
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
        ],
    }


def result(call_id: str, name: str, text: str) -> JSONObject:
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": text}


CONVERSATION: list[JSONObject] = [
    {"role": "user", "content": "fix the bug in calc.py"},
    edit_call("c1", "propose_edit", "calc.py"),
    result("c1", "propose_edit", "applied: wrote 'calc.py'. make check passed"),
    edit_call("c2", "replace_text", "util.py"),
    result("c2", "replace_text", "the user rejected this change to 'util.py'"),
    edit_call("c3", "propose_edit", "new.py"),
    result("c3", "propose_edit", "applied (auto-approved): wrote 'new.py' (new file)."),
    {"role": "assistant", "content": "Fixed."},
    {"role": "user", "content": "now add tests"},
]


def test_estimates_are_characters_over_four() -> None:
    assert tokens(0) == 0 and tokens(1) == 1 and tokens(8) == 2 and tokens(9) == 3
    call = edit_call("c1", "propose_edit", "a.py")
    arguments = call["tool_calls"][0]["function"]["arguments"]
    assert message_chars(call) == len("propose_edit") + len(arguments)
    assert message_chars({"role": "assistant", "content": None}) == 0


def test_the_context_table() -> None:
    table = context_table(CONVERSATION, system_chars=400, limit=1000)
    assert [row["index"] for row in table["messages"]] == list(range(len(CONVERSATION)))
    first = table["messages"][0]
    assert first == {
        "index": 0,
        "role": "user",
        "chars": 22,
        "tokens": 6,
        "preview": "fix the bug in calc.py",
    }
    assert table["system_tokens"] == 100 and table["context_limit"] == 1000
    assert table["total_tokens"] == tokens(400 + sum(r["chars"] for r in table["messages"]))
    assert "characters / 4" in table["estimate"]


def test_previews_are_one_short_line() -> None:
    assert preview({"role": "user", "content": "a\n\n  b"}) == "a b"
    assert len(preview({"role": "user", "content": "x" * 500})) == 80
    assert preview(edit_call("c", "propose_edit", "a.py")).startswith("-> propose_edit({")


def test_files_changed_come_only_from_applied_edits() -> None:
    assert files_changed(CONVERSATION) == ["calc.py", "new.py"]


def test_goal_and_latest_request() -> None:
    assert goal_of(CONVERSATION) == "fix the bug in calc.py"
    assert latest_request(CONVERSATION) == "now add tests"


def test_a_brief_keeps_goal_plan_files_and_what_is_left() -> None:
    brief = resume_brief(
        goal="fix the bug in calc.py",
        latest="now add tests",
        plan=["1. [done] fix add (files: calc.py)", "2. [pending] add tests"],
        files=["calc.py", "new.py"],
        left=["add tests"],
        summary="Done: fixed add.\nLeft: tests.",
    )
    assert brief.startswith(BRIEF_MARK)
    for part in (
        "Goal (the first request of this conversation):\nfix the bug in calc.py",
        "Latest request:\nnow add tests",
        "Plan:\n1. [done] fix add (files: calc.py)\n2. [pending] add tests",
        "Files changed so far (by applied edits):\n- calc.py\n- new.py",
        "Left to do (plan steps not done):\n- add tests",
        "Summary of the work so far:\nDone: fixed add.",
    ):
        assert part in brief


def test_a_brief_with_nothing_known_invents_nothing() -> None:
    brief = resume_brief(goal="g", latest="g", plan=[], files=[], left=[], summary=None)
    assert "Latest request" not in brief
    assert "No plan was committed." in brief and "None recorded." in brief
    assert "(no summary: the model could not be asked)" in brief


def test_a_second_compaction_keeps_the_first_goal_and_files() -> None:
    brief = resume_brief(
        goal="fix the bug in calc.py", latest="", plan=[], files=["calc.py"], left=[], summary="s"
    )
    later: list[JSONObject] = [
        {"role": "user", "content": brief},
        {"role": "assistant", "content": "ok"},
        edit_call("c9", "propose_edit", "extra.py"),
        result("c9", "propose_edit", "applied: wrote 'extra.py'."),
    ]
    assert goal_of(later) == "fix the bug in calc.py"
    assert files_changed(later) == ["calc.py", "extra.py"]
    assert latest_request(later) == ""


def test_a_long_transcript_keeps_the_first_request_and_the_latest_messages() -> None:
    conversation: list[JSONObject] = [{"role": "user", "content": "GOAL"}]
    conversation += [{"role": "assistant", "content": f"step {i} " + "x" * 900} for i in range(50)]
    text = transcript(conversation, 5_000)
    assert text.startswith("USER: GOAL") and "step 49" in text and "step 0 " not in text
    assert "messages left out" in text and len(text) < 6_000
    long_result = [result("c", "read_file", "y" * 10_000)]
    assert "characters left out" in transcript(long_result, 50_000)
