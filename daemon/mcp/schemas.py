"""An MCP tool as the model sees it: its name `mcp__SERVER__TOOL` and a schema providers take.

A server's input schema is whatever JSON Schema its author wrote; providers
reject some of it (OpenAI-style function parameters must be an object schema;
llama.cpp's grammar builder fails on references it cannot follow). So
`provider_schema` inlines local `$ref`s (`#/$defs/...`, `#/definitions/...`),
drops the keys that only describe the schema itself, makes sure the top is an
object with `properties`, and keeps `required` to names that exist. A schema it
cannot make sound this way, or one too big to be worth its context, is cut down
to its top-level properties; a name that does not fit the providers' rules
(64 characters of letters, digits, `_` and `-`) leaves the tool out. Each
such change comes back as a note the turn shows.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

PREFIX = "mcp"
SEPARATOR = "__"
MAX_NAME = 64
MAX_SCHEMA_CHARS = 16_000
_REF_DEPTH = 8
_INLINE_BUDGET = 5_000  # nodes; a sound schema of 16,000 characters has far fewer
# Characters of names and strings the inlining may copy: past MAX_SCHEMA_CHARS the
# result is cut down anyway (a long description behind a ref copied 5,000 times is
# 5,000 copies once written out).
_INLINE_CHARS = MAX_SCHEMA_CHARS
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_-]")
_SELF_KEYS = frozenset({"$schema", "$id", "$defs", "definitions", "$comment"})
_NAMED = frozenset({"properties", "patternProperties"})
_COMBINATORS = ("anyOf", "oneOf", "allOf", "not", "if", "then", "else")


def model_name(server: str, tool: str) -> str | None:
    """`mcp__SERVER__TOOL`, other characters as `_`; None when longer than providers take."""
    name = SEPARATOR.join((PREFIX, server, _UNSAFE_NAME.sub("_", tool)))
    return name if len(name) <= MAX_NAME and tool else None


def is_mcp_name(name: str) -> bool:
    return name.startswith(PREFIX + SEPARATOR)


def provider_schema(schema: Any) -> tuple[dict[str, Any], str | None]:
    """A schema providers accept for the tool's parameters, and a note when it changed."""
    if not isinstance(schema, Mapping):
        return _open_object(), "its input schema was not a JSON object; any arguments are sent"
    defs = {**_mapping(schema.get("definitions")), **_mapping(schema.get("$defs"))}
    try:
        inlined = _inline(schema, defs, 0, [_INLINE_BUDGET, _INLINE_CHARS])
    except _Unresolvable as exc:
        return _top_level(schema), f"its schema refers to {exc}, which it does not define"
    except _TooBig:
        note = "its schema grows too large once its references are followed; only the "
        return _top_level(schema), note + "top-level arguments are described"
    top = _as_object(inlined)
    if top is None:
        return _open_object(), "its schema is not an object schema; any arguments are sent"
    if len(json.dumps(top)) > MAX_SCHEMA_CHARS:
        small = _top_level(top)
        return small, "its schema is very large; only the top-level arguments are described"
    return top, None


class _Unresolvable(ValueError):
    """A `$ref` the schema does not define (or one too deep to follow)."""


class _TooBig(ValueError):
    """Inlining the references would make more nodes than `_INLINE_BUDGET`, or copy more
    characters than `_INLINE_CHARS`."""


def _inline(node: Any, defs: Mapping[str, Any], depth: int, budget: list[int]) -> Any:
    """`node` with its references inlined; `budget` (nodes, characters: shared by the
    whole walk) bounds what is made, since references can multiply: n refs to a
    definition holding n refs are n**depth copies."""
    budget[0] -= 1
    if depth and isinstance(node, str):  # copies: what the schema holds once is bounded
        budget[1] -= len(node)
    elif depth and isinstance(node, Mapping):
        budget[1] -= sum(len(key) for key in node if isinstance(key, str))
    if budget[0] < 0 or budget[1] < 0:
        raise _TooBig
    if isinstance(node, list):
        return [_inline(item, defs, depth, budget) for item in node]
    if not isinstance(node, Mapping):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        if depth >= _REF_DEPTH:
            return {}  # a recursive type: any value from here down
        target = _definition(ref, defs)
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return _inline(merged, defs, depth + 1, budget)
    inlined: dict[str, Any] = {}
    for key, value in node.items():
        if key in _SELF_KEYS:
            continue
        if key in _NAMED and isinstance(value, Mapping):  # argument names, not keywords
            budget[1] -= sum(len(str(name)) for name in value) if depth else 0
            named = {name: _inline(sub, defs, depth, budget) for name, sub in value.items()}
            inlined[key] = named
        else:
            inlined[key] = _inline(value, defs, depth, budget)
    return inlined


def _definition(ref: str, defs: Mapping[str, Any]) -> Mapping[str, Any]:
    for prefix in ("#/$defs/", "#/definitions/"):
        if ref.startswith(prefix) and isinstance(defs.get(ref[len(prefix) :]), Mapping):
            found: Mapping[str, Any] = defs[ref[len(prefix) :]]
            return found
    raise _Unresolvable(ref)


def _as_object(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    kind = schema.get("type", "object")
    if kind != "object" or any(key in schema for key in _COMBINATORS):
        return None
    top = dict(schema)
    top["type"] = "object"
    properties = top.get("properties")
    top["properties"] = dict(properties) if isinstance(properties, Mapping) else {}
    required = top.get("required")
    if isinstance(required, list):
        top["required"] = [n for n in required if isinstance(n, str) and n in top["properties"]]
    else:
        top.pop("required", None)
    return top


def _top_level(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Only the top-level arguments: each with its type and description, if simple."""
    properties = _mapping(schema.get("properties"))
    kept: dict[str, Any] = {}
    for name, prop in properties.items():
        entry: dict[str, Any] = {}
        if isinstance(prop, Mapping):
            if isinstance(prop.get("type"), str):
                entry["type"] = prop["type"]
            if isinstance(prop.get("description"), str):
                entry["description"] = prop["description"][:300]
        kept[str(name)] = entry
    required = schema.get("required")
    result: dict[str, Any] = {"type": "object", "properties": kept}
    if isinstance(required, list):
        result["required"] = [n for n in required if isinstance(n, str) and n in kept]
    return result


def _open_object() -> dict[str, Any]:
    return {"type": "object", "properties": {}}


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
