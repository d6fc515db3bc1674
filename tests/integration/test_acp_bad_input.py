"""Bad input from the editor (issue 31, items 13, 14, 16): each refused at once, saying
what was wrong, and the bridge goes on.

Real daemon, real `harness acp` driven by the SDK's client side, the fake model.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp.exceptions import RequestError

from tests.integration.conftest import Sandbox
from tests.support.acp_editor import Editor, open_editor, text_prompt
from tests.support.fake_model_server import FakeModelServer, Reply
from tests.support.waiting import until

pytestmark = pytest.mark.integration

TIMEOUT = 60


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, TIMEOUT))


def test_a_message_over_the_limit_is_answered_with_its_id_and_ends_the_prompt(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    model.add(Reply(content="Still here."))
    editor = Editor()

    async def scenario() -> tuple[RequestError, Any]:
        async with open_editor(sandbox.env, calc_project, editor) as conn:
            session = (await conn.new_session(cwd=str(calc_project), mcp_servers=[])).session_id
            huge = "x" * (17 << 20)
            with pytest.raises(RequestError) as refused:
                await conn.prompt(session_id=session, prompt=text_prompt(huge))
            after = await conn.prompt(session_id=session, prompt=text_prompt("hello"))
            return refused.value, after

    refused, after = run(scenario())
    assert refused.code == -32600 and "16 MiB" in str(refused)
    assert after.stop_reason == "end_turn" and "Still here." in editor.text()
    assert not any("x" * 1000 in str(request) for request in model.requests)


def test_a_prompt_with_half_an_emoji_is_refused_at_once(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    model.add(Reply(content="Fine."))
    editor = Editor()

    async def scenario() -> tuple[RequestError, Any]:
        async with open_editor(sandbox.env, calc_project, editor) as conn:
            session = (await conn.new_session(cwd=str(calc_project), mcp_servers=[])).session_id
            with pytest.raises(RequestError) as refused:
                half = "smile \ud83d please"  # legal JSON ("\ud83d"), not UTF-8
                await asyncio.wait_for(
                    conn.prompt(session_id=session, prompt=text_prompt(half)), 10
                )
            after = await conn.prompt(session_id=session, prompt=text_prompt("smile please"))
            return refused.value, after

    refused, after = run(scenario())
    assert refused.code == -32602 and "unpaired surrogate" in str(refused.data or refused)
    assert after.stop_reason == "end_turn"
    assert len(model.requests) == 1  # the refused prompt never reached the model


def test_bad_notification_params_log_one_warning_line(
    sandbox: Sandbox,
    model: FakeModelServer,
    daemon: Any,
    calc_project: Path,
    capfd: pytest.CaptureFixture[str],
) -> None:
    editor = Editor()
    logged: list[str] = []

    def seen() -> bool:
        logged.append(capfd.readouterr().err)
        return "session/cancel ignored" in "".join(logged)

    async def scenario() -> None:
        async with open_editor(sandbox.env, calc_project, editor) as conn:
            await conn._conn.send_notification("session/cancel", {"sessionId": 12})
            await until(seen, "the bridge's warning")
            await conn.list_sessions()  # the bridge goes on

    run(scenario())
    err = "".join(logged)
    [line] = [text for text in err.splitlines() if "session/cancel" in text]
    assert line.startswith("harness acp: session/cancel ignored: invalid params: sessionId")
    assert "Traceback" not in err
