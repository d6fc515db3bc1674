"""A turn for a model without tool calls: edits come as text blocks, through the same gate.

When the server says the model "does not support tools" (or the profile says
`tools: false`), the turn goes on without tools: the system prompt adds the
edit format (`agent/edit_blocks.py`), the files the request names are shown
in it (the model cannot read them itself), and each block of the answer is
applied as the matching tool call would be (replace_text for a snippet,
write_file for a new file), so it passes the same approval gate, diff,
checkpoint for undo, and check. What the edits gave (applied, refused, the
check's output) goes back to the model, which may answer with more blocks, for
at most `ROUNDS` calls. The first time, one notice says so and names a model
of the same server that takes tools, when the server tells
(`model_facts.tool_models`); the daemon remembers the model for its later turns.
"""

from __future__ import annotations

import json
import re
import secrets
from pathlib import Path

from coding_harness.daemon.agent.edit_blocks import FORMAT_RULES, EditBlock, edit_blocks
from coding_harness.daemon.agent.loop import AgentLoop, LoopResult
from coding_harness.daemon.agent.seams import EventSink, JSONObject, ToolCall, ToolExecutor
from coding_harness.daemon.config.profiles import ProviderProfile
from coding_harness.daemon.providers.model_facts import ModelFacts
from coding_harness.daemon.tools import files
from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.workspace import Workspace
from coding_harness.protocol.methods import EventKind

ROUNDS = 3
SHOWN_CHARS = 24_000  # of the files the request names, in all
_NAMES = re.compile(r"[\w./-]+\.\w+")


async def tell_no_tools(
    facts: ModelFacts, profile: ProviderProfile, api_key: str | None, events: EventSink
) -> None:
    """Remember the model as one without tools, and say so once, naming one that has."""
    facts.remember_no_tools(profile)
    others = await facts.tool_models(profile, api_key)
    other = f"; a model here that takes tools: {others[0]} (--model {others[0]})" if others else ""
    message = (
        f"{profile.model} does not support tools on this server: the turn goes on with "
        f"edits written as text blocks (set providers.{profile.name}.tools to false to "
        f"skip the attempt){other}"
    )
    events.emit(EventKind.NOTICE, {"message": message})


async def text_edit_turn(
    loop: AgentLoop, tools: ToolExecutor, working: list[JSONObject], root: Path
) -> LoopResult:
    """The turn without tools (`working`: its system prompt, history and request)."""
    request = str(working[-1].get("content") or "")
    working[0]["content"] = (
        f"{working[0]['content']}\n\n{FORMAT_RULES}\n{named_files(root, request)}"
    ).rstrip("\n") + "\n"
    words: list[str] = []
    for _ in range(ROUNDS):
        result = await loop.answer(working)
        if result.stopped is not None:
            return result
        blocks, text = edit_blocks(result.reply)
        if text:
            words.append(text)
        if not blocks:
            break
        outcomes = [await _apply(tools, block) for block in blocks]
        working.append({"role": "user", "content": _report(blocks, outcomes)})
        if all(o.startswith("applied") for o in outcomes) and "fail" not in " ".join(outcomes):
            break
    return LoopResult(reply="\n\n".join(words) or "(the edits above were applied)")


def named_files(root: Path, request: str) -> str:
    """The text of the workspace files the request names, within `SHOWN_CHARS`."""
    workspace, room, parts = Workspace(root), SHOWN_CHARS, []
    for name in dict.fromkeys(_NAMES.findall(request)):
        try:
            text = files.read_file(workspace, name)
        except (ToolRefusal, OSError):
            continue
        if len(text) > room:
            break
        room -= len(text)
        parts.append(f"{name}:\n```\n{text.rstrip()}\n```")
    return "\n\n".join(parts)


async def _apply(tools: ToolExecutor, block: EditBlock) -> str:
    if block.search:
        name = "replace_text"
        arguments = {"path": block.path, "old_text": block.search, "new_text": block.replace}
    else:
        name, arguments = "write_file", {"path": block.path, "content": block.replace}
    call = ToolCall(
        id=f"call_edit_{secrets.token_hex(4)}", name=name, arguments=json.dumps(arguments)
    )
    return await tools.execute(call)


def _report(blocks: list[EditBlock], outcomes: list[str]) -> str:
    lines = [f"{block.path}: {outcome}" for block, outcome in zip(blocks, outcomes, strict=True)]
    return "What your edits gave:\n" + "\n\n".join(lines)
