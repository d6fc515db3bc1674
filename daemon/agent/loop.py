"""One agent turn: call the model, run the tools it asks for, repeat.

Provider-agnostic: it sees a `Model`, a `ToolExecutor` and an `EventSink`.
It stops when the model answers without tool calls, or when a guard fires:

- repetition (`guards.py`): the same batch of calls too often;
- token budget (`budget.py`): the turn or the session used too many tokens;
- no progress (`progress.py`): eight rounds left the workspace unchanged;
- the iteration cap, after which one last call without tools asks for a summary.

A `ContextKeeper`, when given, keeps the conversation inside the model's
context: it compacts before a call whose prompt would be too big, and once
more, followed by one retry, when the provider says the prompt did not fit.

A reply whose calls came as text (`<tool_call>{...}`, `[TOOL_CALLS]`,
`<|python_tag|>`, a bare JSON object naming an offered tool: `text_calls.py`)
is taken as those calls, and kept in the history as calls with their results,
the shape the server expects back. Its text is held from the clients until the
reply is complete, so the call is not shown as words.

Two guards reshape what the model is told instead of stopping: calls cut off
at the output token limit are answered with "split the write"
(`truncation.py`), and repeated shell failures of one shape become a question
(`breaker.py`). Other model errors and cancellation propagate to the caller,
which repairs the history. Each `tool.result` event says `failed: true` when
the call did not do its job (`seams.is_failed`: refused, rejected, failed, or
cut off), so clients need not judge by the wording.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from coding_harness.daemon.agent.breaker import FAILURE_LIMIT, ShellBreaker
from coding_harness.daemon.agent.budget import SessionTokens, TokenBudget
from coding_harness.daemon.agent.guards import RepetitionGuard
from coding_harness.daemon.agent.history import repair_dangling, tool_message
from coding_harness.daemon.agent.model_errors import ModelContextExceeded, ModelError
from coding_harness.daemon.agent.progress import STALL_LIMIT, ProgressGuard
from coding_harness.daemon.agent.seams import (
    EventSink,
    JSONObject,
    Model,
    ModelReply,
    ToolExecutor,
    Usage,
    is_failed,
)
from coding_harness.daemon.agent.text_calls import calls_in_text, may_hold_calls
from coding_harness.daemon.agent.truncation import (
    CUT_OFF_RESULT,
    CUT_OFF_RETRY,
    cut_off_ids,
    is_cut_off_error,
    without_cut_off_arguments,
)
from coding_harness.daemon.config.generation import request_payload
from coding_harness.protocol.methods import EventKind

SUMMARY_REQUEST = (
    "You have used every tool call this turn allows. Without calling tools, "
    "summarise what you changed, what you found, and what is left to do."
)
REPEAT_NOTE = "not run: the same tool calls were repeated, so the turn was stopped"
BUDGET_NOTE = "not run: the token budget was used up, so the turn was stopped"
CUT_OFF_NOTICE = "the model's tool call was cut off at its output limit; asking it to split it"
EVENT_PREVIEW = 4000


@dataclass(kw_only=True, slots=True)
class LoopSettings:
    model_id: str
    generation: Mapping[str, Any]
    max_iterations: int = 20
    turn_token_budget: int | None = None  # prompt + completion tokens; None: no limit
    stall_limit: int = STALL_LIMIT  # rounds without a workspace change; 0: never stop
    shell_failure_limit: int = FAILURE_LIMIT


# Why a loop stopped before the model gave its answer (None: it gave it).
StopReason = Literal["repetition", "no_progress", "budget", "spend_limit", "iteration_cap"]
# The stops that mean the model did not get the task done.
FAILED_STOPS: frozenset[StopReason] = frozenset(
    {"repetition", "no_progress", "budget", "spend_limit"}
)


@dataclass(kw_only=True, slots=True)
class LoopResult:
    reply: str
    stopped: StopReason | None = None


class ContextKeeper(Protocol):
    """Compacts the conversation (`messages[1:]`) in place when it grows too big."""

    def over_limit(self, messages: list[JSONObject]) -> bool: ...

    async def compact(self, messages: list[JSONObject], reason: str) -> bool:
        """Replace the conversation with a brief; False when there was nothing to drop."""
        ...


class _DeltaSink:
    """Text and reasoning as events; while `holding`, the text that may still turn out
    to be calls written as text waits for `settle`."""

    def __init__(self, events: EventSink) -> None:
        self._events = events
        self.holding = False
        self._held = ""

    def begin(self, holding: bool) -> None:
        self.holding, self._held = holding, ""

    def text_delta(self, text: str) -> None:
        if self.holding:
            self._held += text
            if may_hold_calls(self._held):
                return
            self.holding, text, self._held = False, self._held, ""
        if text:
            self._events.emit(EventKind.TEXT_DELTA, {"text": text})

    def settle(self, shown: str | None) -> None:
        """The reply is complete: the held text goes out, or `shown` instead (what is
        left of a text that held calls)."""
        held, self._held, self.holding = self._held, "", False
        self.text_delta(held if shown is None else shown)

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
        progress_probe: Callable[[], Hashable] | None = None,
        session_tokens: SessionTokens | None = None,
        context_keeper: ContextKeeper | None = None,
        spend_check: Callable[[list[JSONObject]], str | None] | None = None,
        redact: Callable[[JSONObject], JSONObject] | None = None,
    ) -> None:
        self._model = model
        # Applied to the model's own messages and calls before they are kept or shown:
        # a secret the user typed into a prompt does not go on into the store.
        self._redact = redact or (lambda message: message)
        self._tools = tools
        self._events = events
        self._settings = settings
        self._on_usage = on_usage
        self._sink = _DeltaSink(events)
        self._progress_probe = progress_probe
        self._budget = TokenBudget(settings.turn_token_budget, session_tokens)
        self._keeper = context_keeper
        self._spend_check = spend_check

    async def run(self, messages: list[JSONObject]) -> LoopResult:
        """Run until the model answers or a guard stops it; `messages` is extended in place."""
        repetition = RepetitionGuard()
        breaker = ShellBreaker(self._settings.shell_failure_limit)
        progress = ProgressGuard(self._progress_probe, self._settings.stall_limit)
        progress.start()
        for _ in range(self._settings.max_iterations):
            if self._keeper is not None and self._keeper.over_limit(messages):
                await self._keeper.compact(messages, "auto")
            if (stop := self._spend_stop(messages)) is not None:
                return stop
            reply = await self._next_reply(messages)
            cut = cut_off_ids(reply)
            messages.append(self._redact(without_cut_off_arguments(reply, cut).to_message()))
            if not reply.tool_calls:
                return LoopResult(reply=reply.content or "(the model returned an empty answer)")
            stop = self._stop_before_tools(reply, repetition, messages)
            if stop is not None:
                return stop
            await progress.before_tools()
            await self._run_tools(reply, messages, cut, breaker)
            if await progress.observe():
                breaker.reset()
            if progress.stalled:
                return LoopResult(reply=progress.explanation(), stopped="no_progress")
        return await self._summarise(messages)

    def _stop_before_tools(
        self, reply: ModelReply, repetition: RepetitionGuard, messages: list[JSONObject]
    ) -> LoopResult | None:
        """A result ending the turn before the reply's calls run, or None to go on."""
        if repetition.stuck(reply.tool_calls):
            repair_dangling(messages, REPEAT_NOTE)
            return LoopResult(
                reply="Stopped: the model kept repeating the same tool calls without "
                "making progress. Try a stronger model or a more specific request.",
                stopped="repetition",
            )
        over = self._budget.exceeded()
        if over is not None:
            repair_dangling(messages, BUDGET_NOTE)
            self._events.emit(EventKind.NOTICE, {"message": over})
            return LoopResult(reply=over, stopped="budget")
        return None

    async def _next_reply(self, messages: list[JSONObject]) -> ModelReply:
        """One call with tools; a server that choked on a cut-off call, or on a prompt
        too big for its context (compacted first), gets one retry."""
        try:
            return await self._call(messages, with_tools=True)
        except ModelContextExceeded:
            if self._keeper is None or not await self._keeper.compact(messages, "overflow"):
                raise
            return await self._call(messages, with_tools=True)
        except ModelError as error:
            if not is_cut_off_error(error):
                raise
        messages.append({"role": "user", "content": CUT_OFF_RETRY})
        self._events.emit(EventKind.NOTICE, {"message": CUT_OFF_NOTICE})
        return await self._call(messages, with_tools=True)

    async def _call(self, messages: list[JSONObject], *, with_tools: bool) -> ModelReply:
        own: JSONObject = {"model": self._settings.model_id, "messages": messages}
        if with_tools:
            own["tools"] = self._tools.schemas()
            own["tool_choice"] = "auto"
        payload = request_payload(own, self._settings.generation)
        self._sink.begin(holding=with_tools)
        reply = await self._model.complete(payload, self._sink)
        if reply.usage is not None:
            self._budget.add(reply.usage)
            self._on_usage(reply.usage)
        found = None
        if with_tools and not reply.tool_calls:
            offered = [str(s["function"]["name"]) for s in own["tools"]]
            found = calls_in_text(reply.content, offered)
        if found is None:
            self._sink.settle(None)
            return reply
        self._sink.settle(found.text)
        return ModelReply(
            content=found.text,
            reasoning=reply.reasoning,
            tool_calls=found.calls,
            finish_reason="tool_calls",
            usage=reply.usage,
        )

    async def _run_tools(
        self,
        reply: ModelReply,
        messages: list[JSONObject],
        cut: set[str],
        breaker: ShellBreaker,
    ) -> None:
        for call in reply.tool_calls:
            shown = {"id": call.id, "name": call.name, "arguments": call.arguments[:EVENT_PREVIEW]}
            self._events.emit(EventKind.TOOL_CALL, self._redact(shown))
            if call.id in cut:
                result, failed = CUT_OFF_RESULT, True
            else:
                raw = await self._tools.execute(call)
                result, failed = breaker.review(call, raw), is_failed(raw)
            messages.append(tool_message(call.id, call.name, result))
            shown_result = {"id": call.id, "name": call.name, "result": result[:EVENT_PREVIEW]}
            self._events.emit(EventKind.TOOL_RESULT, {**shown_result, "failed": failed})

    def _spend_stop(self, messages: list[JSONObject]) -> LoopResult | None:
        """Before a model call: a result ending the turn at a spending limit, or None."""
        message = self._spend_check(messages) if self._spend_check is not None else None
        if message is None:
            return None
        self._events.emit(EventKind.NOTICE, {"message": message})
        return LoopResult(reply=message, stopped="spend_limit")

    async def answer(self, messages: list[JSONObject]) -> LoopResult:
        """One call without tools (a general question); the reply is appended to `messages`."""
        if (stop := self._spend_stop(messages)) is not None:
            return stop
        reply = await self._call(messages, with_tools=False)
        messages.append(ModelReply(content=reply.content).to_message())
        return LoopResult(reply=reply.content or "(the model returned an empty answer)")

    async def _summarise(self, messages: list[JSONObject]) -> LoopResult:
        request = {"role": "user", "content": SUMMARY_REQUEST}
        if (stop := self._spend_stop([*messages, request])) is not None:
            return stop
        reply = await self._call([*messages, request], with_tools=False)
        messages.append(request)
        # Tools were not offered, so any call it still made is dropped.
        messages.append(ModelReply(content=reply.content).to_message())
        return LoopResult(
            reply=reply.content or "(no summary from the model)", stopped="iteration_cap"
        )
