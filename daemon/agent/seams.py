"""The seams between the agent loop and what it drives, as Protocols.

The loop sees a `Model`, a `ToolExecutor`, an `Approver` and an `EventSink`;
implementations do not inherit from these. The records that cross the seams
live here too, so providers, tools and the loop share one vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

JSONObject = dict[str, Any]


class FailedResult(str):
    """A tool result saying the call did not do what it was asked: refused, rejected,
    failed. It is the text the model reads; the loop's `tool.result` event carries
    `failed: true` for it (`is_failed`), so a client need not judge by the wording."""

    __slots__ = ()


def is_failed(result: str) -> bool:
    """Whether a tool result reports a call that did not do its job: a `FailedResult`,
    or a result in the old convention, starting `Error:`."""
    return isinstance(result, FailedResult) or result.startswith("Error:")


@dataclass(kw_only=True, slots=True)
class ToolCall:
    """One call the model asked for; `arguments` is the raw JSON text it sent."""

    id: str
    name: str
    arguments: str

    def to_wire(self) -> JSONObject:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(kw_only=True, slots=True)
class Usage:
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.cached_tokens += other.cached_tokens
        self.completion_tokens += other.completion_tokens

    def to_wire(self) -> JSONObject:
        return {
            "prompt_tokens": self.prompt_tokens,
            "cached_tokens": self.cached_tokens,
            "completion_tokens": self.completion_tokens,
        }


@dataclass(kw_only=True, slots=True)
class ModelReply:
    """One normalized answer from any provider type."""

    content: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage | None = None

    def to_message(self) -> JSONObject:
        """The assistant message in chat-completions format, as history keeps it.

        `content` is always a string, "" beside tool calls: every server accepts
        that, while some (llama-cpp-python) reject `null` and others need the key.
        """
        message: JSONObject = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [call.to_wire() for call in self.tool_calls]
        return message


class StreamSink(Protocol):
    """Receives streamed pieces of an answer as they arrive."""

    def text_delta(self, text: str) -> None: ...

    def reasoning_delta(self, text: str) -> None: ...


class QuietSink:
    """A `StreamSink` that drops what it is given: for a model call whose answer is not
    the reply (a classifier's word, a summary, turn-close notes)."""

    def text_delta(self, text: str) -> None:
        pass

    def reasoning_delta(self, text: str) -> None:
        pass


class Model(Protocol):
    """A provider: sends one chat-completions payload, returns one reply.

    Raises `agent.model_errors.ModelError` (or a subclass) for every failure.
    """

    @property
    def label(self) -> str: ...

    async def complete(self, payload: JSONObject, sink: StreamSink) -> ModelReply: ...


class EventSink(Protocol):
    """Publishes an event to every client attached to the session."""

    def emit(self, kind: str, data: JSONObject) -> object: ...


@dataclass(kw_only=True, slots=True)
class ApprovalRequest:
    kind: Literal["edit", "command"]
    path: str
    diff: str
    summary: str
    # What an "always" answer adds to the session's allow-list (`uv run`); "": none.
    allow: str = ""


@dataclass(kw_only=True, slots=True)
class ApprovalDecision:
    decision: Literal["yes", "no", "skip", "revert"]
    reason: str = ""
    client: str = ""


class Approver(Protocol):
    """Asks the people attached to the session; waits for the first answer."""

    async def ask(self, request: ApprovalRequest) -> ApprovalDecision: ...


class ToolExecutor(Protocol):
    """The tools bound to one turn: their schemas, and running one call."""

    def schemas(self) -> list[JSONObject]: ...

    async def execute(self, call: ToolCall) -> str: ...
