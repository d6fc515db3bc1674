"""Chat-completions JSON into a `ModelReply`: streamed chunks and whole answers.

`ReplyAssembler` folds `chat.completion.chunk` objects, one at a time, into one
reply, forwarding text and reasoning to a `StreamSink` as they arrive.
`reply_from_completion` reads the non-streaming `chat.completion` shape. Both
absorb the quirks of real OpenAI-compatible servers: `content: null`, reasoning
under `reasoning_content` or `reasoning`, tool-call fragments that repeat their
name or send empty ids, missing `arguments`, arguments sent as an object, usage
on its own chunk or on the finish chunk, cached tokens under several names, and
an `error` object inside a successful answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from coding_harness.daemon.agent.model_errors import ModelBadResponse
from coding_harness.daemon.agent.seams import JSONObject, ModelReply, StreamSink, ToolCall, Usage
from coding_harness.daemon.providers.answer_errors import error_in_answer


@dataclass(slots=True)
class _PartialCall:
    index: int
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ReplyAssembler:
    """Accumulates one streamed answer; `result()` gives the reply so far."""

    def __init__(self, endpoint: str = "") -> None:
        self._endpoint = endpoint
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, _PartialCall] = {}
        self._last_index: int | None = None
        self._finish_reason: str | None = None
        self._usage: Usage | None = None
        self.size = 0  # characters of text, reasoning and tool-call arguments so far

    @property
    def finished(self) -> bool:
        """True once a choice carried a finish_reason."""
        return self._finish_reason is not None

    def add(self, chunk: JSONObject, sink: StreamSink) -> None:
        """Fold one parsed chunk in; an in-band error raises (see `answer_errors`)."""
        if not isinstance(chunk, dict):
            raise ModelBadResponse(
                f"{self._endpoint or 'the server'} sent a chunk that is not a JSON object",
                endpoint=self._endpoint,
            )
        error = chunk.get("error")
        if error:
            raise error_in_answer(error, self._endpoint)
        usage = _usage_in(chunk)
        if usage is not None:
            self._usage = usage
        choices = chunk.get("choices")
        for choice in choices if isinstance(choices, list) else []:
            if isinstance(choice, dict) and choice.get("index", 0) == 0:
                self._add_choice(choice, sink)

    def result(self) -> ModelReply:
        calls = sorted(self._calls.values(), key=lambda c: c.index)
        return ModelReply(
            content="".join(self._content),
            reasoning="".join(self._reasoning),
            tool_calls=[
                ToolCall(id=c.id or f"call_{n}", name=c.name, arguments="".join(c.arguments))
                for n, c in enumerate(calls)
            ],
            finish_reason=self._finish_reason,
            usage=self._usage,
        )

    def _add_choice(self, choice: JSONObject, sink: StreamSink) -> None:
        delta = choice.get("delta")
        if isinstance(delta, dict):
            text = delta.get("content")
            if isinstance(text, str) and text:
                self._content.append(text)
                self.size += len(text)
                sink.text_delta(text)
            thought = _reasoning_in(delta)
            if thought:
                self._reasoning.append(thought)
                self.size += len(thought)
                sink.reasoning_delta(thought)
            fragments = delta.get("tool_calls")
            for fragment in fragments if isinstance(fragments, list) else []:
                if isinstance(fragment, dict):
                    self._add_fragment(fragment)
        finish = choice.get("finish_reason")
        if isinstance(finish, str) and finish:
            self._finish_reason = finish

    def _add_fragment(self, fragment: JSONObject) -> None:
        call = self._call_for(fragment)
        call_id = fragment.get("id")
        if not call.id and isinstance(call_id, str | int) and str(call_id):
            call.id = str(call_id)
        function = fragment.get("function")
        if not isinstance(function, dict):
            return
        name = function.get("name")
        if not call.name and isinstance(name, str):
            call.name = name
        piece = arguments_text(function.get("arguments"))
        call.arguments.append(piece)
        self.size += len(piece)

    def _call_for(self, fragment: JSONObject) -> _PartialCall:
        index = fragment.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            index = self._index_without_one(fragment)
        self._last_index = index
        if index not in self._calls:
            self._calls[index] = _PartialCall(index=index)
        return self._calls[index]

    def _index_without_one(self, fragment: JSONObject) -> int:
        """Servers that send no index: a new non-empty id starts a new call."""
        call_id = fragment.get("id")
        known = {c.id for c in self._calls.values()}
        if self._last_index is None or (call_id and call_id not in known):
            return max(self._calls, default=-1) + 1
        return self._last_index


def arguments_text(raw: Any) -> str:
    """Tool-call arguments as JSON text: a string as sent, an object re-serialized."""
    if raw is None:
        return ""
    if isinstance(raw, str):
        return raw
    return json.dumps(raw, ensure_ascii=False)


def _reasoning_in(part: JSONObject) -> str:
    for key in ("reasoning_content", "reasoning"):
        value = part.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _usage_in(holder: JSONObject) -> Usage | None:
    raw = holder.get("usage")
    if not isinstance(raw, dict):
        extra = holder.get("x_groq")
        raw = extra.get("usage") if isinstance(extra, dict) else None
    return usage_from(raw) if isinstance(raw, dict) else None


def usage_from(raw: JSONObject) -> Usage:
    """Token counts; cached tokens under whichever name the server uses."""
    details = raw.get("prompt_tokens_details")
    candidates = (
        details.get("cached_tokens") if isinstance(details, dict) else None,
        raw.get("prompt_cache_hit_tokens"),
        raw.get("cached_tokens"),
    )
    cached = next((_int(c) for c in candidates if _int(c) > 0), 0)
    return Usage(
        prompt_tokens=_int(raw.get("prompt_tokens")),
        cached_tokens=cached,
        completion_tokens=_int(raw.get("completion_tokens")),
    )


def reply_from_completion(body: JSONObject, endpoint: str = "") -> ModelReply:
    """A non-streaming `chat.completion` body as a ModelReply."""
    where = endpoint or "the server"
    if not isinstance(body, dict):
        raise ModelBadResponse(
            f"{where} answered with JSON that is not an object", endpoint=endpoint
        )
    if body.get("error"):
        raise error_in_answer(body["error"], endpoint)
    choices = body.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(first, dict) or not isinstance(message, dict):
        raise ModelBadResponse(f"{where} answered without choices[0].message", endpoint=endpoint)
    usage = body.get("usage")
    finish = first.get("finish_reason")
    return ModelReply(
        content=_content_text(message.get("content")),
        reasoning=_reasoning_in(message),
        tool_calls=_whole_calls(message.get("tool_calls")),
        finish_reason=finish if isinstance(finish, str) and finish else None,
        usage=usage_from(usage) if isinstance(usage, dict) else None,
    )


def _content_text(content: Any) -> str:
    """`content` as text: null or missing is "", a list of parts is joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        return "".join(p for p in parts if isinstance(p, str))
    return ""


def _whole_calls(raw: Any) -> list[ToolCall]:
    calls: list[ToolCall] = []
    for n, entry in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(entry, dict):
            continue
        function = entry.get("function")
        function = function if isinstance(function, dict) else {}
        name = function.get("name")
        call_id = entry.get("id")
        calls.append(
            ToolCall(
                id=str(call_id) if isinstance(call_id, str | int) and str(call_id) else f"call_{n}",
                name=name if isinstance(name, str) else "",
                arguments=arguments_text(function.get("arguments")),
            )
        )
    return calls
