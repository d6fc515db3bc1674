"""An editor's MCP servers over ACP: handed to the daemon, run once for every thread.

Zed and other ACP clients send the MCP servers their user configured with
each `session/new`; `harness acp` sets them on the daemon's session, so two
editor threads (two sessions) share one server process, and each call is put
to the editor through the approval gate like a command.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import schema

from tests.integration.conftest import Sandbox
from tests.support.acp_editor import Editor, open_editor, text_prompt
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.mcp_setup import server_processes
from tests.support.processes import client

pytestmark = pytest.mark.integration

TIME_SERVER = str(Path(sys.executable).parent / "mcp-server-time")


def _time_servers() -> list[Any]:
    return [
        schema.McpServerStdio(name="time", command=TIME_SERVER, args=[], env=[]),
        schema.SseMcpServer(type="sse", name="legacy", url="http://127.0.0.1:9/sse", headers=[]),
    ]


def test_two_editor_threads_share_one_server_and_each_call_is_asked(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any
) -> None:
    call = tool_call("mcp__time__get_current_time", timezone="UTC")
    model.add(Reply(tool_calls=[call]), Reply(content="first"))
    model.add(Reply(tool_calls=[call]), Reply(content="second"))
    editor = Editor(choices=["allow", "allow"])

    async def scenario() -> list[str]:
        async with open_editor(sandbox.env, sandbox.workspace, editor) as conn:
            reasons = []
            for _ in range(2):
                session = await conn.new_session(
                    cwd=str(sandbox.workspace), mcp_servers=_time_servers()
                )
                answer = await conn.prompt(
                    session_id=session.session_id, prompt=text_prompt("what time is it?")
                )
                reasons.append(answer.stop_reason)
            return reasons

    assert asyncio.run(asyncio.wait_for(scenario(), 90)) == ["end_turn", "end_turn"]
    assert len(editor.permission_requests) == 2  # each call was put to the editor
    results = [
        next(m["content"] for m in request["messages"] if m["role"] == "tool")
        for request in (model.requests[1], model.requests[3])
    ]
    assert all('"timezone": "UTC"' in result for result in results)
    assert "MCP servers not used (only stdio and Streamable HTTP servers are): legacy" in (
        editor.text("agent_thought_chunk")
    )
    with client(sandbox.socket) as conn:
        servers = conn.request("mcp.list", {})["servers"]
    assert [(s["name"], s["scope"], s["state"]) for s in servers] == [("time", "client", "ready")]
    assert len(server_processes(daemon.pid, "mcp-server-time")) == 1
