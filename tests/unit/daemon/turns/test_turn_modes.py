"""A turn runs in its session's permission mode, resolved when it starts: the session's
own choice, else the config's `agent.mode`; read-only wins over -y."""

from __future__ import annotations

from pathlib import Path

from tests.support.turn_harness import TurnHarness, calls, say, tool_names

WRITE_TOOLS = {"propose_edit", "replace_text", "write_file"}


def test_agent_mode_read_only_holds_even_under_yes(tmp_path: Path) -> None:
    write = {"path": "x.py", "content": "x = 1\n"}
    box = TurnHarness(
        tmp_path,
        [calls(("write_file", write)), say("Plan: 1. write x.py")],
        agent={"mode": "read-only"},
    )
    finished = box.turn("write x.py")  # the harness submits with -y
    assert finished["exit_code"] == 0
    assert not set(tool_names(box.sent(0))) & WRITE_TOOLS
    assert "Permission mode: read-only (plan mode)" in box.system(0)
    refused = box.sent(1)["messages"][-1]["content"]
    assert refused.startswith("refused: write_file is not available because this session is in")
    assert not (box.cwd / "x.py").exists()


def test_the_sessions_own_mode_overrides_the_config_at_the_next_turn(tmp_path: Path) -> None:
    box = TurnHarness(tmp_path, [say("looked"), say("done")])
    box.session.options.mode = "read-only"
    box.turn("look")
    assert not set(tool_names(box.sent(0))) & WRITE_TOOLS
    box.session.options.mode = "accept-edits"
    box.turn("do it")
    assert set(tool_names(box.sent(1))) >= WRITE_TOOLS
    assert "Permission mode: accept-edits" in box.system(1)
