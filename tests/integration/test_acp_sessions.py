"""Turns and sessions as real ACP clients use them (issue 31, items 2, 4, 5, 6).

`$/cancel_request` on a prompt cancels its turn; opening a session while a turn runs
shows that turn's task and reply once; `session/close` frees the session in the agent
and leaves it in the daemon; a session opened from another folder is shown under its
own. Real daemon, real `harness acp` driven by the SDK's client side, the fake model.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp.exceptions import RequestError

from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support.acp_editor import Editor, open_editor, text_prompt
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import client
from tests.support.waiting import until, wait_for

pytestmark = pytest.mark.integration

TIMEOUT = 60


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, TIMEOUT))


def _state(sandbox: Sandbox, session: str) -> str:
    with client(sandbox.socket, "check") as check:
        rows = check.request("session.list", {})["sessions"]
    return next(str(row["state"]) for row in rows if row["session"] == session)


def test_cancel_request_on_a_prompt_cancels_its_turn(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    edit = tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)
    model.add(Reply(tool_calls=[edit], delay=5), Reply(content="Fixed."))
    editor = Editor(choices=["allow"])

    async def scenario() -> tuple[str, RequestError]:
        async with open_editor(sandbox.env, calc_project, editor) as conn:
            session = (await conn.new_session(cwd=str(calc_project), mcp_servers=[])).session_id
            request_id = conn._conn._next_request_id  # the id the prompt is sent with
            prompt = asyncio.ensure_future(
                conn.prompt(session_id=session, prompt=text_prompt("fix calc.py"))
            )
            await until(lambda: model.requests, "the model request")
            await conn._conn.send_notification("$/cancel_request", {"requestId": request_id})
            with pytest.raises(RequestError) as failure:
                await prompt
            await asyncio.to_thread(
                wait_for, lambda: _state(sandbox, session) == "idle", "the turn's end"
            )
            return session, failure.value

    session, failure = run(scenario())
    assert failure.code == -32800
    assert (calc_project / "calc.py").read_text() == BUGGY  # the turn did not go on
    assert editor.permission_requests == []
    with client(sandbox.socket, "check") as check:
        messages = check.request("session.history", {"session": session})["messages"]
    assert not any(m.get("content") == "Fixed." for m in messages)


def test_loading_a_session_mid_turn_shows_its_task_and_reply_once(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    edit = tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)
    model.add(Reply(content="Let me fix it.", tool_calls=[edit]), Reply(content="Fixed add."))
    first, second = Editor(), Editor()  # the first holds its permission request

    async def scenario() -> None:
        async with (
            open_editor(sandbox.env, calc_project, first) as a,
            open_editor(sandbox.env, calc_project, second) as b,
        ):
            session = (await a.new_session(cwd=str(calc_project), mcp_servers=[])).session_id
            prompt = asyncio.ensure_future(
                a.prompt(session_id=session, prompt=text_prompt("fix calc.py"))
            )
            await until(lambda: first.permission_requests, "the permission request")
            await b.load_session(session_id=session, cwd=str(calc_project), mcp_servers=[])
            first.held.put_nowait("allow")
            await prompt
            await until(lambda: "Fixed add." in second.text(), "the reply in the second editor")

    run(scenario())
    assert second.text("user_message_chunk") == "fix calc.py"
    assert second.text().count("Let me fix it.") == 1
    assert second.text().count("Fixed add.") == 1
    assert second.permission_requests == []  # not its turn


def test_close_keeps_the_session_and_another_folder_loads_it_under_its_own(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    model.add(
        Reply(tool_calls=[tool_call("read_file", path="calc.py")]), Reply(content="It subtracts.")
    )
    elsewhere = sandbox.root / "elsewhere"
    elsewhere.mkdir()
    first, second = Editor(), Editor()

    async def scenario() -> tuple[str, list[str]]:
        async with open_editor(sandbox.env, calc_project, first) as conn:
            session = (await conn.new_session(cwd=str(calc_project), mcp_servers=[])).session_id
            await conn.prompt(session_id=session, prompt=text_prompt("explain calc.py"))
            await conn.close_session(session_id=session)
            listed = await conn.list_sessions()
        async with open_editor(sandbox.env, elsewhere, second) as conn:
            await conn.load_session(session_id=session, cwd=str(elsewhere), mcp_servers=[])
            told = lambda: "this session works in" in second.text("agent_thought_chunk")  # noqa: E731
            await until(told, "the note on the session's folder")
        return session, [info.session_id for info in listed.sessions]

    session, listed = run(scenario())
    assert session in listed  # closed in the agent, kept in the daemon
    [call] = second.of_kind("tool_call")
    assert call.locations[0].path == str(calc_project / "calc.py")
    assert f"this session works in {calc_project}" in second.text("agent_thought_chunk")
    assert "It subtracts." in second.text()
