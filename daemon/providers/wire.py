"""The messages of a request as every OpenAI-compatible server accepts them.

Servers disagree on an assistant message that carries only tool calls: OpenAI,
Ollama and vLLM take `"content": null`, mlx_lm.server leaves the key out of
its own answers, and llama-cpp-python's server rejects `null` outright (HTTP
500, "Input should be a valid string"). An empty string is what all of them
accept (DeepSeek, LM Studio and OpenRouter send it themselves), so that is what
goes out: `wire_payload` turns a null or missing `content` into "" on every
message, whatever history it came from (a stored session, a loaded file, a
compaction), without changing the caller's own messages.
"""

from __future__ import annotations

from typing import Any

from coding_harness.daemon.agent.seams import JSONObject


def wire_message(message: Any) -> Any:
    """`message` with a null or missing `content` as ""; anything else as it is."""
    if not isinstance(message, dict) or isinstance(message.get("content"), str | list):
        return message
    return {**message, "content": ""}


def wire_payload(payload: JSONObject) -> JSONObject:
    """`payload` with every message fit for any server (a copy when one changes)."""
    messages = payload.get("messages")
    if not isinstance(messages, list):
        return payload
    return {**payload, "messages": [wire_message(message) for message in messages]}
