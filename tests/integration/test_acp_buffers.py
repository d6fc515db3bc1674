"""Edits of a file the editor holds with unsaved changes (issue 31, item 8).

read_file shows the model the editor's buffer; an edit made against what it read
is planned on that text and written back through the editor's
`fs/write_text_file`, or, when the editor offers no writes, refused without
touching the disk behind it. A buffer equal to the disk is edited on disk.

Real daemon, real `harness acp` driven by the SDK's client side, the fake model.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support.acp_editor import Editor, open_editor, text_prompt
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call

pytestmark = pytest.mark.integration

TIMEOUT = 60
UNSAVED = "def add(a, b):\n    return a - b  # typed, not saved\n"


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, TIMEOUT))


def _tool_results(model: FakeModelServer) -> list[str]:
    return [str(m["content"]) for m in model.requests[-1]["messages"] if m["role"] == "tool"]


def test_edits_of_an_unsaved_buffer_are_planned_on_it_and_written_through_the_editor(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    calc = str(calc_project / "calc.py")
    halfway = UNSAVED.replace("a - b", "a + b")
    model.add(
        Reply(tool_calls=[tool_call("read_file", path="calc.py")]),
        Reply(
            tool_calls=[
                tool_call("replace_text", path="calc.py", old_text="a - b", new_text="a + b")
            ]
        ),
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=halfway, new=FIXED)]),
        Reply(content="Fixed in the editor."),
    )
    editor = Editor(choices=["allow", "allow"], buffers={calc: UNSAVED})

    async def scenario() -> Any:
        async with open_editor(
            sandbox.env, calc_project, editor, read_files=True, write_files=True
        ) as conn:
            session = (await conn.new_session(cwd=str(calc_project), mcp_servers=[])).session_id
            return await conn.prompt(session_id=session, prompt=text_prompt("fix calc.py"))

    answer = run(scenario())
    assert answer.stop_reason == "end_turn"
    # The unsaved text went back through the editor, which saved it; from then on the
    # buffer is the disk's text, and the next edit is written to the disk as usual.
    assert editor.writes == [(calc, halfway)]
    results = _tool_results(model)
    assert not any("stale base" in r or "not found" in r for r in results), results
    assert (calc_project / "calc.py").read_text() == FIXED
    [first, _] = editor.permission_requests
    [diff] = [c for c in first.content if c.type == "diff"]
    assert (diff.old_text, diff.new_text) == (UNSAVED, halfway)  # the diff of the buffer


def test_an_editor_that_takes_no_writes_gets_the_edit_refused_and_the_disk_kept(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    calc = str(calc_project / "calc.py")
    model.add(
        Reply(tool_calls=[tool_call("read_file", path="calc.py")]),
        Reply(tool_calls=[tool_call("write_file", path="calc.py", content=FIXED)]),
        Reply(content="Could not write it."),
    )
    editor = Editor(choices=["allow"], buffers={calc: UNSAVED})

    async def scenario() -> None:
        async with open_editor(sandbox.env, calc_project, editor, read_files=True) as conn:
            session = (await conn.new_session(cwd=str(calc_project), mcp_servers=[])).session_id
            await conn.prompt(session_id=session, prompt=text_prompt("fix calc.py"))

    run(scenario())
    assert (calc_project / "calc.py").read_text() == BUGGY  # nothing written behind it
    assert editor.permission_requests == [] and editor.writes == []
    [_, refused] = _tool_results(model)
    assert "unsaved changes in the editor" in refused and "save the file" in refused
    [call] = [s.tool_call_id for s in editor.of_kind("tool_call") if s.kind == "edit"]
    statuses = [u.status for u in editor.of_kind("tool_call_update") if u.tool_call_id == call]
    assert statuses[-1] == "failed"
