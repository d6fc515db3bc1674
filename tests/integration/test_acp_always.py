"""ACP "Always allow" on a `uv run` approval (issue 25, item 19): the allow-list gets
`uv run`, the program and its subcommand, never a word of the approval's prose
(`run`), and the next `uv run` of the session is not asked.

Real daemon, real `harness acp` driven by the SDK's client side, the fake model.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.integration.conftest import Sandbox
from tests.support.acp_editor import Editor, open_editor, text_prompt
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import client

pytestmark = pytest.mark.integration


def test_always_allow_on_uv_run_allows_uv_run_and_nothing_else(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any
) -> None:
    model.add(
        Reply(tool_calls=[tool_call("run_shell", command="uv run python -c pass")]),
        Reply(tool_calls=[tool_call("run_shell", command="uv run python -V")]),
        Reply(content="Ran both."),
    )
    editor = Editor(choices=["allow_always"])

    async def scenario() -> tuple[str, Any]:
        async with open_editor(sandbox.env, sandbox.workspace, editor) as conn:
            session = await conn.new_session(cwd=str(sandbox.workspace), mcp_servers=[])
            answer = await conn.prompt(
                session_id=session.session_id, prompt=text_prompt("run it twice")
            )
            return session.session_id, answer

    session, answer = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert answer.stop_reason == "end_turn"
    [asked] = editor.permission_requests  # the second uv run was not asked
    assert "uv run python -c pass" in asked.title
    with client(sandbox.socket) as conn:
        options = conn.request("session.configure", {"session": session})["options"]
    assert options["allowed_commands"] == ["uv run"]
    results = [m["content"] for m in model.requests[2]["messages"] if m["role"] == "tool"]
    assert len(results) == 2 and not any("declined" in r for r in results), results
