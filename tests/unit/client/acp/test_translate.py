"""Daemon events and stored history as ACP updates, without processes."""

from __future__ import annotations

from typing import Any

import pytest
from acp import schema

from coding_harness.client.acp.diff_texts import diff_texts
from coding_harness.client.acp.prompt_text import UnsupportedContent, prompt_text
from coding_harness.client.acp.translate import SessionView, stop_reason, tool_title
from coding_harness.protocol.events import Event


def event(kind: str, seq: int = 1, **data: Any) -> Event:
    return Event(session="s1", seq=seq, kind=kind, data=data, notification={})


def wire(update: Any) -> dict[str, Any]:
    """Every update must be a valid session/update of the schema."""
    note = schema.SessionNotification(session_id="s1", update=update)
    dumped: dict[str, Any] = note.model_dump(mode="json", by_alias=True, exclude_none=True)
    schema.SessionNotification.model_validate(dumped)
    return dumped["update"]


@pytest.mark.parametrize(
    ("finished", "reason"),
    [
        ({"exit_code": 0, "stopped": None}, "end_turn"),
        ({"exit_code": 130, "stopped": None}, "cancelled"),
        ({"exit_code": 0, "stopped": "iteration_cap"}, "max_turn_requests"),
        ({"exit_code": 1, "stopped": "repetition"}, "refusal"),
        ({"exit_code": 1, "stopped": "no_progress"}, "refusal"),
        ({"exit_code": 1, "stopped": "budget"}, "max_tokens"),
        ({"exit_code": 2}, "end_turn"),  # a failed check is a finished turn
    ],
)
def test_stop_reasons(finished: dict[str, Any], reason: str) -> None:
    assert stop_reason(finished) == reason


def test_a_turn_from_another_client_shows_its_prompt_and_ours_does_not() -> None:
    view = SessionView("s1", "/w")
    [echo] = view.updates(event("turn.started", turn="t1", text="from the terminal"))
    assert wire(echo) == {
        "sessionUpdate": "user_message_chunk",
        "content": {"type": "text", "text": "from the terminal"},
    }
    view.own_texts.add("mine")
    assert view.updates(event("turn.started", turn="t2", text="mine")) == []
    assert "t2" in view.own_turns


def test_tool_calls_carry_kind_title_and_absolute_location() -> None:
    view = SessionView("s1", "/w")
    [start] = view.updates(
        event("tool.call", id="c1", name="read_file", arguments='{"path": "src/a.py"}')
    )
    got = wire(start)
    assert (got["kind"], got["title"], got["status"]) == (
        "read",
        "read_file src/a.py",
        "in_progress",
    )
    assert got["locations"] == [{"path": "/w/src/a.py"}]
    [cut] = view.updates(event("tool.call", id="c2", name="run_shell", arguments='{"command": "ma'))
    assert wire(cut)["kind"] == "execute" and wire(cut)["title"] == "run_shell"
    [other] = view.updates(event("tool.call", id="c3", name="mcp__x__y", arguments="{}"))
    assert wire(other)["kind"] == "other"


def test_a_diff_lands_on_the_open_edit_call() -> None:
    view = SessionView("s1", "/w")
    view.updates(event("tool.call", id="e1", name="propose_edit", arguments='{"path": "a.py"}'))
    diff = "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3\n"
    [update] = view.updates(event("diff", path="a.py", diff=diff, new_file=False))
    got = wire(update)
    assert got["toolCallId"] == "e1"
    assert got["content"] == [
        {
            "type": "diff",
            "path": "/w/a.py",
            "oldText": "x = 1\ny = 2\n",
            "newText": "x = 1\ny = 3\n",
        }
    ]


def test_a_reply_that_was_not_streamed_is_the_last_agent_chunk() -> None:
    view = SessionView("s1", "/w")
    view.updates(event("turn.started", turn="t1", text="x"))
    view.updates(event("text.delta", text="partial answer"))
    [guard] = view.updates(
        event("turn.finished", turn="t1", exit_code=1, reply="stopped: the same calls repeated")
    )
    assert wire(guard)["content"]["text"].endswith("stopped: the same calls repeated")
    view.updates(event("turn.started", turn="t2", text="y"))
    view.updates(event("text.delta", text="All done."))
    assert view.updates(event("turn.finished", turn="t2", exit_code=0, reply="All done.")) == []
    view.updates(event("turn.started", turn="t3", text="z"))
    assert view.updates(event("turn.finished", turn="t3", exit_code=130, reply="(cancelled)")) == []


def test_usage_plan_and_notes_calls() -> None:
    view = SessionView("s1", "/w", context_size=8000)
    [usage] = view.updates(
        event("usage", prompt_tokens=500, completion_tokens=50, session_cost_usd=0.25)
    )
    assert wire(usage) == {
        "sessionUpdate": "usage_update",
        "used": 550,
        "size": 8000,
        "cost": {"amount": 0.25, "currency": "USD"},
    }
    assert view.updates(event("usage", prompt_tokens=1, completion_tokens=1, notes=True)) == []
    [plan] = view.updates(
        event("plan", steps=[{"index": 1, "text": "a", "done": True}, {"text": "b"}, "junk"])
    )
    assert [(e["content"], e["status"]) for e in wire(plan)["entries"]] == [
        ("a", "completed"),
        ("b", "pending"),
    ]


def test_replay_of_a_stored_conversation() -> None:
    view = SessionView("s1", "/w")
    messages = [
        {"role": "user", "content": "fix it"},
        {
            "role": "assistant",
            "content": "Reading.",
            "tool_calls": [
                {"id": "c1", "function": {"name": "read_file", "arguments": '{"path": "a.py"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "x = 1\n"},
        {"role": "assistant", "content": "Done."},
    ]
    kinds = [wire(u)["sessionUpdate"] for u in view.replay(messages)]
    assert kinds == [
        "user_message_chunk",
        "agent_message_chunk",
        "tool_call",
        "tool_call_update",
        "agent_message_chunk",
    ]


def test_unknown_kinds_become_nothing() -> None:
    view = SessionView("s1", "/w")
    assert view.updates(event("edit.write", id="w", path="a", phase="done")) == []
    assert view.updates(event("model.waiting", seconds=3, done=False)) == []


def test_tool_title_is_short() -> None:
    assert tool_title("grep", {"pattern": "def x", "path": "."}) == "grep ."
    assert len(tool_title("run_shell", {"command": "x" * 500})) == 200


def test_diff_texts_of_a_new_file_and_several_hunks() -> None:
    assert diff_texts("--- /dev/null\n+++ b/n.py\n@@ -0,0 +1 @@\n+x\n") == (None, "x\n")
    two = (
        "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+A\n@@ -9 +9 @@\n-b\n+B\n\\ No newline at end of file\n"
    )
    assert diff_texts(two) == ("a\n\nb\n", "A\n\nB\n")


def test_prompt_text_of_blocks() -> None:
    blocks: list[Any] = [
        schema.TextContentBlock(type="text", text="explain"),
        schema.ResourceContentBlock(type="resource_link", name="a.py", uri="file:///w/src/a.py"),
        schema.EmbeddedResourceContentBlock(
            type="resource",
            resource=schema.TextResourceContents(uri="file:///w/b.py", text="print('```')"),
        ),
        schema.EmbeddedResourceContentBlock(
            type="resource",
            resource=schema.BlobResourceContents(uri="file:///other/c.bin", blob="AAAA"),
        ),
    ]
    assert prompt_text(blocks, "/w") == (
        "explain\n[file: src/a.py]\nContents of b.py:\n````\nprint('```')\n````\n"
        "[file: /other/c.bin (binary, not included)]"
    )
    image = schema.ImageContentBlock(type="image", data="aGk=", mime_type="image/png")
    with pytest.raises(UnsupportedContent, match="image content is not supported"):
        prompt_text([image], "/w")


def test_reasoning_and_notices_are_thoughts() -> None:
    view = SessionView("s1", "/w")
    [thought] = view.updates(event("reasoning.delta", text="Let me think."))
    assert wire(thought) == {
        "sessionUpdate": "agent_thought_chunk",
        "content": {"type": "text", "text": "Let me think."},
    }
    [notice] = view.updates(event("notice", message="retrying in 3 s"))
    assert wire(notice)["content"]["text"] == "\n[retrying in 3 s]\n"


def test_an_undo_is_a_thought_naming_the_files() -> None:
    view = SessionView("s1", "/w")
    [said] = view.updates(event("undo", turn="t-1", restored=["a.py", "b.py"], skipped=[]))
    assert wire(said)["content"]["text"] == "\n[undo of turn t-1: put back a.py, b.py]\n"
    assert view.updates(event("checkpoint", turn="t-1", files=["a.py"])) == []
