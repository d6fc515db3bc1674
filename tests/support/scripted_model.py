"""A scripted model playing a weak one, and one agent-loop turn over it.

`ScriptedModel` answers from a list and records every payload; `EchoTools`
answers every call with its own name; `run_loop` runs one turn of the real
`AgentLoop` over them. Shared by the loop, guard, turn and generation tests.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from coding_harness.daemon.agent.loop import AgentLoop, LoopResult, LoopSettings
from coding_harness.daemon.agent.seams import (
    JSONObject,
    ModelReply,
    StreamSink,
    ToolCall,
    ToolExecutor,
)


class ScriptedModel:
    """Answers from a list (an exception in it is raised); records every payload it was sent."""

    def __init__(self, replies: list[ModelReply | Exception]) -> None:
        self.replies = list(replies)
        self.payloads: list[JSONObject] = []

    @property
    def label(self) -> str:
        return "scripted"

    async def complete(self, payload: JSONObject, sink: StreamSink) -> ModelReply:
        self.payloads.append({**payload, "messages": list(payload["messages"])})
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        sink.text_delta(reply.content)
        return reply


class EchoTools:
    def __init__(self) -> None:
        self.calls: list[ToolCall] = []

    def schemas(self) -> list[JSONObject]:
        return [{"type": "function", "function": {"name": "read_file", "parameters": {}}}]

    async def execute(self, call: ToolCall) -> str:
        self.calls.append(call)
        return f"result of {call.name} {call.arguments}"


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, JSONObject]] = []

    def emit(self, kind: str, data: JSONObject) -> None:
        self.events.append((kind, data))


def call(name: str = "read_file", args: str = '{"path": "a.py"}', id: str = "c1") -> ToolCall:
    return ToolCall(id=id, name=name, arguments=args)


@dataclass
class Run:
    result: LoopResult
    messages: list[JSONObject]
    model: ScriptedModel
    events: Recorder

    def tool_results(self) -> list[str]:
        return [m["content"] for m in self.messages if m["role"] == "tool"]


def run_loop(
    replies: list[ModelReply | Exception],
    tools: ToolExecutor | None = None,
    *,
    settings: dict[str, Any] | None = None,
    **loop_options: Any,
) -> Run:
    """Run one turn of a loop over the scripted replies; `loop_options` go to AgentLoop."""
    model, events = ScriptedModel(replies), Recorder()
    loop = AgentLoop(
        model=model,
        tools=tools or EchoTools(),
        events=events,
        settings=LoopSettings(model_id="m", generation={}, **(settings or {})),
        on_usage=lambda usage: None,
        **loop_options,
    )
    messages: list[JSONObject] = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "u"},
    ]
    result = asyncio.run(loop.run(messages))
    return Run(result=result, messages=messages, model=model, events=events)
