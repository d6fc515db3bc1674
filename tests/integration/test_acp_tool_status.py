"""A tool call that did not do its job shows `failed` in the editor, by the daemon's
flag on `tool.result`, whatever its wording (issue 31, item 9).

Real daemon, real `harness acp` driven by the SDK's client side, the fake model.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import Sandbox
from tests.support.acp_editor import Editor, open_editor, text_prompt
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import client, events_until_finished

pytestmark = pytest.mark.integration

TIMEOUT = 60


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, TIMEOUT))


def test_a_refusal_that_does_not_say_error_is_failed_and_a_read_completed(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    model.add(
        Reply(
            tool_calls=[
                tool_call("replace_text", path="calc.py", old_text="nowhere", new_text="x"),
                tool_call("read_file", path="calc.py"),
            ]
        ),
        Reply(content="Done."),
    )
    editor = Editor()

    async def scenario() -> list[dict[str, Any]]:
        async with open_editor(sandbox.env, calc_project, editor) as conn:
            session = (await conn.new_session(cwd=str(calc_project), mcp_servers=[])).session_id
            with client(sandbox.socket, "watcher") as watcher:
                watcher.request("session.attach", {"session": session})
                await conn.prompt(session_id=session, prompt=text_prompt("fix calc.py"))
                return events_until_finished(watcher)

    events = run(scenario())
    results = [e["data"] for e in events if e["kind"] == "tool.result"]
    assert [(r["name"], r["failed"]) for r in results] == [
        ("replace_text", True),
        ("read_file", False),
    ]
    assert results[0]["result"].startswith("old_text was not found")  # no "Error:" in it
    calls = {s.title.split()[0]: s.tool_call_id for s in editor.of_kind("tool_call")}
    last = {u.tool_call_id: u.status for u in editor.of_kind("tool_call_update") if u.status}
    assert last[calls["replace_text"]] == "failed"
    assert last[calls["read_file"]] == "completed"
