"""Permission modes over ACP: `harness acp` driven by the SDK's client side, on the real
daemon. A new, resumed or loaded session answers with its modes, `session/set_mode`
switches the daemon session's mode (and a bad one is refused), and every `mode.changed`,
the editor's own or a terminal's, reaches the editor as `current_mode_update`."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError

from tests.integration.conftest import Sandbox
from tests.support.acp_editor import Editor, open_editor
from tests.support.processes import client

TIMEOUT = 60


async def until(condition: Any, what: str, seconds: float = 20) -> None:
    for _ in range(int(seconds / 0.02)):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def current_modes(editor: Editor) -> list[str]:
    return [update.current_mode_id for update in editor.of_kind("current_mode_update")]


def test_set_mode_switches_the_daemon_session_and_every_change_is_told(
    sandbox: Sandbox, daemon: Any, calc_project: Path
) -> None:
    editor = Editor()

    async def scenario() -> str:
        async with open_editor(sandbox.env, calc_project, editor) as conn:
            session = await conn.new_session(cwd=str(calc_project), mcp_servers=[])
            assert session.modes is not None
            assert session.modes.current_mode_id == "ask"
            ids = [mode.id for mode in session.modes.available_modes]
            assert ids == ["ask", "accept-edits", "read-only"]
            sid = session.session_id
            await conn.set_session_mode(session_id=sid, mode_id="read-only")
            await until(lambda: current_modes(editor) == ["read-only"], "the editor's own change")
            with client(sandbox.socket, "terminal") as terminal:
                row = terminal.request("session.list")["sessions"][0]
                assert row["options"]["mode"] == "read-only"
                terminal.request("session.configure", {"session": sid, "mode": "accept-edits"})
            await until(
                lambda: current_modes(editor) == ["read-only", "accept-edits"],
                "a terminal's change",
            )
            with pytest.raises(RequestError) as refused:
                await conn.set_session_mode(session_id=sid, mode_id="yolo")
            assert refused.value.code == -32602
            assert "ask, accept-edits, read-only" in str(refused.value.data or refused.value)
            return sid

    sid = asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))
    later = Editor()

    async def reopen() -> None:
        async with open_editor(sandbox.env, calc_project, later) as conn:
            resumed = await conn.resume_session(session_id=sid, cwd=str(calc_project))
            assert resumed.modes is not None
            assert resumed.modes.current_mode_id == "accept-edits"
            loaded = await conn.load_session(session_id=sid, cwd=str(calc_project))
            assert loaded.modes is not None
            assert loaded.modes.current_mode_id == "accept-edits"

    asyncio.run(asyncio.wait_for(reopen(), TIMEOUT))
