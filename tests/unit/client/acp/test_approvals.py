"""Approvals as permission requests: the options, allow_always, and the race."""

from __future__ import annotations

import asyncio
from typing import Any

from coding_harness.client.acp.approvals import Approvals
from coding_harness.client.acp.translate import SessionView
from coding_harness.protocol.events import parse_event


def own_view() -> SessionView:
    """Session s1 as the bridge sees it while a turn it submitted runs."""
    view = SessionView("s1", "/w")
    view.own_turns.add("t1")
    started = {"session": "s1", "seq": 1, "kind": "turn.started", "data": {"turn": "t1"}}
    event = parse_event({"jsonrpc": "2.0", "method": "event", "params": started})
    assert event is not None
    view.updates(event)
    return view


class FakeEditor:
    """Answers each permission request with the next scripted outcome."""

    def __init__(self, outcomes: list[dict[str, Any]]) -> None:
        self.outcomes = outcomes
        self.asked: list[dict[str, Any]] = []
        self.withdrawn: list[int | str] = []
        self.notes: list[dict[str, Any]] = []

    def start_request(self, method: str, params: Any) -> tuple[int, asyncio.Future[Any]]:
        self.asked.append(params)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if self.outcomes:
            future.set_result({"outcome": self.outcomes.pop(0)})
        return len(self.asked), future

    async def cancel_outgoing(self, request_id: int | str) -> None:
        self.withdrawn.append(request_id)

    async def notify(self, method: str, params: Any) -> None:
        self.notes.append(params)


def approvals(
    editor: FakeEditor, sent: list[tuple[str, dict[str, Any]]], approvers: int = 0
) -> Approvals:
    """The approvals of session s1, on which `approvers` terminals answer every turn."""

    async def ask(method: str, params: dict[str, Any]) -> Any:
        if method == "session.list":
            return {"sessions": [{"session": "s1", "approvers": approvers}]}
        sent.append((method, params))
        return {}

    return Approvals(editor=editor, ask=ask)  # type: ignore[arg-type]


COMMAND = {
    "request": "r1",
    "kind": "command",
    "path": "",
    "diff": "",
    "summary": "run the command `uv run pytest` in the workspace",
    "allow": "uv run",
}


def test_always_allow_answers_yes_widens_the_allow_list_and_skips_the_next_question() -> None:
    editor = FakeEditor([{"outcome": "selected", "optionId": "allow_always"}])
    sent: list[tuple[str, dict[str, Any]]] = []
    view = own_view()

    async def main() -> None:
        gate = approvals(editor, sent)
        await gate.requested(view, COMMAND)
        await gate.requested(view, {**COMMAND, "request": "r2"})

    asyncio.run(main())
    [asked] = editor.asked
    assert [o["kind"] for o in asked["options"]] == ["allow_once", "allow_always", "reject_once"]
    assert asked["toolCall"]["kind"] == "execute"
    assert sent == [
        ("session.configure", {"session": "s1", "allow_command": "uv run"}),
        ("approval.respond", {"request": "r1", "decision": "yes", "session": "s1"}),
        ("approval.respond", {"request": "r2", "decision": "yes", "session": "s1"}),
    ]


def test_an_edit_offers_no_always_and_a_cancelled_answer_decides_nothing() -> None:
    editor = FakeEditor([{"outcome": "cancelled"}, {"outcome": "selected", "optionId": "x"}])
    sent: list[tuple[str, dict[str, Any]]] = []
    view = own_view()
    edit = {"request": "e1", "kind": "edit", "path": "a.py", "summary": "edit a.py"}
    edit["diff"] = "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-a\n+b\n"

    async def main() -> None:
        gate = approvals(editor, sent, approvers=1)  # a terminal decides a cancelled one
        await gate.requested(view, edit)
        await gate.requested(view, {**edit, "request": "e2"})

    asyncio.run(main())
    assert [o["kind"] for o in editor.asked[0]["options"]] == ["allow_once", "reject_once"]
    assert editor.asked[0]["toolCall"]["content"][0]["newText"] == "b\n"
    # cancelled: left to the terminal; an unknown option: taken as a refusal
    assert sent == [("approval.respond", {"request": "e2", "decision": "no", "session": "s1"})]


def test_an_answer_from_elsewhere_withdraws_the_open_question() -> None:
    editor = FakeEditor([])  # never answers
    sent: list[tuple[str, dict[str, Any]]] = []
    view = own_view()
    view.last_call = "call-7"

    async def main() -> None:
        gate = approvals(editor, sent)
        asking = asyncio.ensure_future(gate.requested(view, COMMAND))
        await asyncio.sleep(0)
        await gate.resolved_elsewhere({"request": "r1", "decision": "no"})
        await gate.requested(view, COMMAND)  # a replayed request already resolved
        asking.cancel()

    asyncio.run(main())
    assert editor.withdrawn == [1] and len(editor.asked) == 1
    assert editor.notes[0]["update"] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call-7",
        "status": "failed",
    }
    assert sent == []


def test_a_command_without_an_allow_entry_offers_no_always() -> None:
    """An MCP call names no allow-list entry: no word of its summary ("call") is
    allowed, and it is asked each time (issue 25, item 19)."""
    editor = FakeEditor([{"outcome": "selected", "optionId": "allow_always"}] * 2)
    sent: list[tuple[str, dict[str, Any]]] = []
    view = own_view()
    mcp = {**COMMAND, "summary": "call the MCP tool `mcp__t__x` (server 't') with {}"}
    del mcp["allow"]

    async def main() -> None:
        gate = approvals(editor, sent)
        await gate.requested(view, mcp)
        await gate.requested(view, {**mcp, "request": "r2"})

    asyncio.run(main())
    assert [o["kind"] for o in editor.asked[0]["options"]] == ["allow_once", "reject_once"]
    assert len(editor.asked) == 2
    assert [method for method, _ in sent] == ["approval.respond", "approval.respond"]


def test_a_cancelled_answer_with_nobody_else_to_answer_is_a_rejection_said_so() -> None:
    editor = FakeEditor([{"outcome": "cancelled"}])
    sent: list[tuple[str, dict[str, Any]]] = []
    edit = {"request": "e1", "kind": "edit", "path": "a.py", "summary": "edit a.py"}

    asyncio.run(approvals(editor, sent).requested(own_view(), edit))
    [(method, params)] = sent
    assert (method, params["decision"]) == ("approval.respond", "no")
    assert "cancelled" in params["reason"]
    assert "taken as a rejection" in editor.notes[-1]["update"]["content"]["text"]


def test_another_clients_turn_is_not_put_to_the_editor() -> None:
    editor = FakeEditor([{"outcome": "selected", "optionId": "allow"}])
    sent: list[tuple[str, dict[str, Any]]] = []
    view = SessionView("s1", "/w")  # a terminal's turn runs: not one this bridge submitted
    edit = {"request": "e1", "kind": "edit", "path": "a.py", "summary": "edit a.py"}

    asyncio.run(approvals(editor, sent).requested(view, edit))
    assert editor.asked == [] and sent == []
    assert "waits for an answer" in editor.notes[-1]["update"]["content"]["text"]
