"""A prompt larger than the model's window is refused before any model call, and is not
kept, so later prompts stay small (issue 31, item 15).

Real daemon, real `harness acp` driven by the SDK's client side, the fake model.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from acp.exceptions import RequestError

from tests.integration.conftest import Sandbox
from tests.support.acp_editor import Editor, open_editor, text_prompt
from tests.support.fake_model_server import FakeModelServer, Reply

pytestmark = pytest.mark.integration

TIMEOUT = 90
HUGE = "0123456789abcdef" * 131_072  # 2 MiB


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, TIMEOUT))


def test_a_prompt_larger_than_the_window_is_refused_before_the_model_and_not_kept(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    model.add(Reply(content="Hello."))
    editor = Editor()

    async def scenario() -> tuple[str, Any]:
        async with open_editor(sandbox.env, calc_project, editor) as conn:
            session = (await conn.new_session(cwd=str(calc_project), mcp_servers=[])).session_id
            with pytest.raises(RequestError) as refused:
                await conn.prompt(session_id=session, prompt=text_prompt("read this " + HUGE))
            answer = await conn.prompt(session_id=session, prompt=text_prompt("say hello"))
            return str(refused.value), answer

    refused, answer = run(scenario())
    assert "context window" in refused and "not sent to the model" in refused
    assert answer.stop_reason == "end_turn"
    [request] = model.requests  # only the second prompt reached the model
    assert len(json.dumps(request)) < 200_000
    assert "0123456789abcdef" * 4 not in json.dumps(request)
