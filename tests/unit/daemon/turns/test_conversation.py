"""What a general question is answered with: the conversation as plain talk."""

from __future__ import annotations

from coding_harness.daemon.agent.seams import JSONObject
from coding_harness.daemon.turns.conversation import conversation

CALL = {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}


def test_tool_calls_and_results_are_left_out_and_the_sides_alternate() -> None:
    history: list[JSONObject] = [
        {"role": "user", "content": "fix calc.py"},
        {"role": "assistant", "content": "Let me look.", "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "c1", "content": "def add(a, b): ..."},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "c1", "content": "applied"},
        {"role": "assistant", "content": "Fixed: add now adds."},
    ]
    assert conversation(history, 8_000) == [
        {"role": "user", "content": "fix calc.py"},
        {"role": "assistant", "content": "Let me look.\n\nFixed: add now adds."},
    ]


def test_the_newest_messages_are_kept_within_half_the_context() -> None:
    history: list[JSONObject] = []
    for n in range(10):
        history += [
            {"role": "user", "content": f"question {n} " + "x" * 200},
            {"role": "assistant", "content": f"answer {n} " + "y" * 200},
        ]
    kept = conversation(history, 500)  # 1,000 characters: two exchanges
    assert [m["content"].split()[1] for m in kept] == ["8", "8", "9", "9"]
    assert kept[0]["role"] == "user" and kept[-1]["role"] == "assistant"


def test_an_unanswered_last_question_is_left_out() -> None:
    history: list[JSONObject] = [
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": "two"},
        {"role": "user", "content": "cancelled before any answer"},
    ]
    assert conversation(history, 8_000) == history[:2]
