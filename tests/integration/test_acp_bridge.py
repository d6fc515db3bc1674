"""`harness acp` driven by a real ACP client (the SDK's client side), on the real daemon.

Each test starts the daemon and one or more `harness acp` processes, as editors
do, and scripts the model with the fake server.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support.acp_editor import Editor, open_editor, text_prompt
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import client

TIMEOUT = 60


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, TIMEOUT))


async def until(condition: Any, what: str, seconds: float = 20) -> None:
    for _ in range(int(seconds / 0.02)):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_prompt_reads_a_file_and_the_editor_approves_the_edit(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    model.add(
        Reply(content="Looking.", tool_calls=[tool_call("read_file", path="calc.py")]),
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="Fixed add."),
    )
    editor = Editor(choices=["allow"])

    async def scenario() -> tuple[str, Any]:
        async with open_editor(sandbox.env, calc_project, editor) as conn:
            session = await conn.new_session(cwd=str(calc_project), mcp_servers=[])
            answer = await conn.prompt(
                session_id=session.session_id, prompt=text_prompt("fix the bug in calc.py")
            )
            return session.session_id, answer

    session, answer = run(scenario())
    assert answer.stop_reason == "end_turn"
    assert (calc_project / "calc.py").read_text() == FIXED
    starts = editor.of_kind("tool_call")
    assert [(s.kind, s.title) for s in starts] == [
        ("read", "read_file calc.py"),
        ("edit", "propose_edit calc.py"),
        ("execute", "make check"),
    ]
    assert starts[2].status == "completed"  # the check passed
    assert starts[0].locations[0].path == str(calc_project / "calc.py")
    [asked] = editor.permission_requests
    assert asked.tool_call_id == starts[1].tool_call_id
    [diff] = [c for c in asked.content if c.type == "diff"]
    assert (diff.old_text, diff.new_text) == (BUGGY, FIXED)
    assert "Fixed add." in editor.text()
    assert "user_message_chunk" not in editor.kinds()  # the editor's own prompt is not echoed
    with client(sandbox.socket, "check") as check:  # the ACP session id is the daemon's
        listed = check.request("session.list", {})["sessions"]
    assert session in [row["session"] for row in listed]
