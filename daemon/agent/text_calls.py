"""Tool calls a model wrote as text instead of as calls, recognised and taken as calls.

When a server's chat template fails to parse a small model's call (the usual
Ollama and llama.cpp failure), the call arrives as the reply's text. These
forms are recognised, and only for tools offered in that request:

- `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` (Hermes, Qwen; the
  closing tag may be missing at the end), one or several;
- Mistral's `[TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]`, and its
  newer `[TOOL_CALLS]name[ARGS]{...}`;
- Llama 3's `<|python_tag|>{"name": ..., "parameters": {...}}` (several joined by `;`);
- a reply that is nothing but a JSON object naming a tool (or a list of them),
  bare or in a ```json fence.

`calls_in_text` gives the text left around the calls and the calls, each with
its arguments as a JSON object's text, or None when the text holds no call to
an offered tool (then it stays the reply, untouched).
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from coding_harness.daemon.agent.seams import ToolCall

MARKERS = ("<tool_call>", "[TOOL_CALLS]", "<|python_tag|>")
_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
_MISTRAL_ARGS = re.compile(r"([\w.-]+)\[ARGS\]")


@dataclass(kw_only=True, slots=True)
class TextCalls:
    text: str  # what is left of the reply around the calls
    calls: list[ToolCall]


def calls_in_text(content: str, offered: Collection[str]) -> TextCalls | None:
    if not content.strip() or not offered:
        return None
    found = _tagged(content) or _mistral(content) or _python_tag(content) or _bare(content)
    if found is None:
        return None
    text, objects = found
    calls = [call for n, o in enumerate(objects) if (call := _call(o, n, offered)) is not None]
    if not calls or len(calls) != len(objects):
        return None  # a call to a tool not offered: the text stays the reply
    return TextCalls(text=text.strip(), calls=calls)


def may_hold_calls(text: str) -> bool:
    """Whether a reply starting with `text` could turn out to be calls written as text
    (its deltas are held back until the reply is complete)."""
    start = text.lstrip()
    if not start:
        return True
    if start[0] in "{[" or _prefix_either(start, "```json", *MARKERS):
        return True
    return any(marker in text for marker in MARKERS)


def _tagged(content: str) -> tuple[str, list[Any]] | None:
    if "<tool_call>" not in content:
        return None
    objects = [_json(m.group(1)) for m in _TAGGED.finditer(content)]
    return _TAGGED.sub("", content), objects


def _mistral(content: str) -> tuple[str, list[Any]] | None:
    head, marker, rest = content.partition("[TOOL_CALLS]")
    if not marker:
        return None
    rest = rest.strip()
    named = _MISTRAL_ARGS.match(rest)
    if named is not None:  # [TOOL_CALLS]name[ARGS]{...}
        arguments = _json(rest[named.end() :])
        return head, [{"name": named.group(1), "arguments": arguments}]
    value = _json(rest)
    return head, value if isinstance(value, list) else [value]


def _python_tag(content: str) -> tuple[str, list[Any]] | None:
    head, marker, rest = content.partition("<|python_tag|>")
    if not marker:
        return None
    rest = rest.replace("<|eom_id|>", "").replace("<|eot_id|>", "").strip()
    value = _json(rest)
    if value is None:
        value = [_json(part) for part in rest.split(";") if part.strip()]
    return head, value if isinstance(value, list) else [value]


def _bare(content: str) -> tuple[str, list[Any]] | None:
    text = content.strip()
    fenced = _FENCE.match(text)
    value = _json(fenced.group(1) if fenced else text)
    if isinstance(value, dict):
        return "", [value]
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return "", value
    return None


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _call(value: Any, index: int, offered: Collection[str]) -> ToolCall | None:
    if not isinstance(value, dict):
        return None
    inner = value.get("function")
    function: dict[str, Any] = inner if isinstance(inner, dict) else value
    name = function.get("name")
    if not isinstance(name, str) or name not in offered:
        return None
    arguments = function.get("arguments", function.get("parameters", {}))
    if isinstance(arguments, str):
        parsed = _json(arguments)
        arguments = parsed if isinstance(parsed, dict) else arguments
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return ToolCall(id=f"call_text_{secrets.token_hex(4)}_{index}", name=name, arguments=text)


def _prefix_either(start: str, *markers: str) -> bool:
    """`start` begins with one of `markers`, or is the beginning of one."""
    return any(start.startswith(m) or m.startswith(start) for m in markers)
