"""One agent turn: call the model, run the tools it asks for, repeat.

Provider-agnostic: it sees a `Model`, a `ToolExecutor` and an `EventSink`.
It stops when the model answers without tool calls, when the repetition guard
fires, or at the iteration cap, after which one last call without tools asks
for a summary. Model errors and cancellation propagate to the caller, which
repairs the history.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from coding_harness.protocol.methods import EventKind

from ..seams import EventSink, JSONObject, Model, ModelReply, ToolExecutor, Usage
from .guards import RepetitionGuard
from .history import repair_dangling, tool_message

SUMMARY_REQUEST = (
    "You have used every tool call this turn allows. Without calling tools, "
    "summarise what you changed, what you found, and what is left to do."
)
REPEAT_NOTE = "not run: the same tool calls were repeated, so the turn was stopped"
EVENT_PREVIEW = 4000


@dataclass(kw_only=True, slots=True)
class LoopSettings:
    model_id: str
    generation: Mapping[str, Any]
    max_iterations: int = 20


@dataclass(kw_only=True, slots=True)
class LoopResult:
    reply: str
    stopped: str | None = None


class _DeltaSink:
    def __init__(self, events: EventSink) -> None:
        self._events = events

    def text_delta(self, text: str) -> None:
        if text:
            self._events.emit(EventKind.TEXT_DELTA, {"text": text})

    def reasoning_delta(self, text: str) -> None:
        if text:
            self._events.emit(EventKind.REASONING_DELTA, {"text": text})


class AgentLoop:
    def __init__(
        self,
        *,
        model: Model,
        tools: ToolExecutor,
        events: EventSink,
        settings: LoopSettings,
        on_usage: Callable[[Usage], None],
    ) -> None:
        self._model = model
        self._tools = tools
        self._events = events
        self._settings = settings
        self._on_usage = on_usage
        self._sink = _DeltaSink(events)

    async def run(self, messages: list[JSONObject]) -> LoopResult:
        """Run until the model answers; `messages` is extended in place."""
        guard = RepetitionGuard()
        for _ in range(self._settings.max_iterations):
            reply = await self._call(messages, with_tools=True)
            messages.append(reply.to_message())
            if not reply.tool_calls:
                return LoopResult(reply=reply.content or "(the model returned an empty answer)")
            if guard.stuck(reply.tool_calls):
                repair_dangling(messages, REPEAT_NOTE)
                return LoopResult(
                    reply="Stopped: the model kept repeating the same tool calls without "
                    "making progress. Try a stronger model or a more specific request.",
                    stopped="repetition",
                )
            await self._run_tools(reply, messages)
        return await self._summarise(messages)

    async def _call(self, messages: list[JSONObject], *, with_tools: bool) -> ModelReply:
        payload: JSONObject = {"model": self._settings.model_id, "messages": messages}
        if with_tools:
            payload["tools"] = self._tools.schemas()
            payload["tool_choice"] = "auto"
        payload.update(self._settings.generation)
        reply = await self._model.complete(payload, self._sink)
        if reply.usage is not None:
            self._on_usage(reply.usage)
        return reply

    async def _run_tools(self, reply: ModelReply, messages: list[JSONObject]) -> None:
        for call in reply.tool_calls:
            self._events.emit(
                EventKind.TOOL_CALL,
                {"id": call.id, "name": call.name, "arguments": call.arguments[:EVENT_PREVIEW]},
            )
            result = await self._tools.execute(call)
            messages.append(tool_message(call.id, call.name, result))
            self._events.emit(
                EventKind.TOOL_RESULT,
                {"id": call.id, "name": call.name, "result": result[:EVENT_PREVIEW]},
            )

    async def _summarise(self, messages: list[JSONObject]) -> LoopResult:
        request = {"role": "user", "content": SUMMARY_REQUEST}
        reply = await self._call([*messages, request], with_tools=False)
        messages.append(request)
        # Tools were not offered, so any call it still made is dropped.
        messages.append(ModelReply(content=reply.content).to_message())
        return LoopResult(
            reply=reply.content or "(no summary from the model)", stopped="iteration_cap"
        )
