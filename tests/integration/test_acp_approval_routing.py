"""Which approvals an editor is asked for, and what a non-answer means (issue 31).

An editor is asked only about the turns it started (an ACP client answers by its own
policy, as acpx's --approve-all does, assuming the question is its prompt's); the
setting CODING_HARNESS_ACP_APPROVALS=all asks it about the others' turns too. A
permission request the editor answers `cancelled`, or with an error, is a rejection
when no other client can answer.

Real daemon, real `harness acp` driven by the SDK's client side, the fake model.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import schema

from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support.acp_editor import Editor, open_editor, text_prompt
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import client, events_until_finished, wait_for_event
from tests.support.waiting import until

pytestmark = pytest.mark.integration

TIMEOUT = 60
WAITS = "waits for an answer from the client that started this turn"


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, TIMEOUT))


def _edit_then(reply: str) -> list[Reply]:
    return [
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content=reply),
    ]


def test_an_idle_editor_is_not_asked_about_a_terminals_turn(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    model.add(*_edit_then("Left alone."))
    editor = Editor(choices=["allow"])  # acpx --approve-all: it would answer at once

    async def scenario() -> list[dict[str, Any]]:
        async with open_editor(sandbox.env, calc_project, editor) as conn:
            session = (await conn.new_session(cwd=str(calc_project), mcp_servers=[])).session_id
            with client(sandbox.socket, "terminal") as terminal:
                terminal.request("session.attach", {"session": session})
                terminal.request("session.submit", {"session": session, "text": "fix calc.py"})
                asked = await asyncio.to_thread(wait_for_event, terminal, "approval.requested")
                told = lambda: WAITS in editor.text("agent_thought_chunk")  # noqa: E731
                await until(
                    lambda: editor.permission_requests or told(),
                    "the editor told (or asked) about the terminal's approval",
                )
                assert editor.permission_requests == []
                respond = {"request": asked["data"]["request"], "decision": "no"}
                terminal.request("approval.respond", respond)
                return await asyncio.to_thread(events_until_finished, terminal)

    events = run(scenario())
    [resolved] = [e["data"] for e in events if e["kind"] == "approval.resolved"]
    assert resolved["decision"] == "no" and "terminal" in resolved["client"]
    assert (calc_project / "calc.py").read_text() == BUGGY
    assert editor.permission_requests == []


def test_the_setting_asks_the_editor_about_other_clients_turns(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    model.add(*_edit_then("Fixed."))
    editor = Editor(choices=["allow"])
    env = {**sandbox.env, "CODING_HARNESS_ACP_APPROVALS": "all"}

    async def scenario() -> list[dict[str, Any]]:
        async with open_editor(env, calc_project, editor) as conn:
            session = (await conn.new_session(cwd=str(calc_project), mcp_servers=[])).session_id
            with client(sandbox.socket, "watcher", approvals=False) as watcher:
                watcher.request("session.attach", {"session": session})
                watcher.request("session.submit", {"session": session, "text": "fix calc.py"})
                return await asyncio.to_thread(events_until_finished, watcher)

    events = run(scenario())
    [resolved] = [e["data"] for e in events if e["kind"] == "approval.resolved"]
    assert "harness-acp (test-editor)" in resolved["client"]
    assert (calc_project / "calc.py").read_text() == FIXED


@pytest.mark.parametrize("answer", ["cancelled", "error"])
def test_a_cancelled_permission_with_no_one_else_to_answer_is_a_rejection(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path, answer: str
) -> None:
    model.add(*_edit_then("Not changed."))
    editor = Editor(choices=[answer])

    async def scenario() -> Any:
        async with open_editor(sandbox.env, calc_project, editor) as conn:
            session = (await conn.new_session(cwd=str(calc_project), mcp_servers=[])).session_id
            return await conn.prompt(session_id=session, prompt=text_prompt("fix calc.py"))

    stop: schema.PromptResponse = run(scenario())
    assert stop.stop_reason == "end_turn"
    assert (calc_project / "calc.py").read_text() == BUGGY
    assert "taken as a rejection" in editor.text("agent_thought_chunk")
    tool_results = [m["content"] for m in model.requests[1]["messages"] if m["role"] == "tool"]
    assert any("not written" in result for result in tool_results), tool_results


def test_a_rejected_edit_is_failed_and_stays_failed_when_its_result_arrives(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    model.add(*_edit_then("Left alone."))
    editor = Editor(choices=["reject"])

    async def scenario() -> None:
        async with open_editor(sandbox.env, calc_project, editor) as conn:
            session = (await conn.new_session(cwd=str(calc_project), mcp_servers=[])).session_id
            await conn.prompt(session_id=session, prompt=text_prompt("fix calc.py"))

    run(scenario())
    [call] = [s.tool_call_id for s in editor.of_kind("tool_call") if s.kind == "edit"]
    statuses = [u.status for u in editor.of_kind("tool_call_update") if u.tool_call_id == call]
    assert statuses and statuses[-1] == "failed" and "completed" not in statuses, statuses
