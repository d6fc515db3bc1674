"""Tool registration, schemas, and turning one model call into one tool result.

Tools register by decorator on a `ToolRegistry`; a name registered twice is an
error. `BoundTools` is the `ToolExecutor` the agent loop sees for one turn: it
checks each call (name, JSON, argument names and types) before the handler
runs, so whatever the model sends, it gets back a result it can act on. A
`ToolRefusal`, or a handler that fails, comes back as a `FailedResult`: the
loop's `tool.result` event then says `failed: true`.
It is also where secrets are kept in (`secret_guard.py`): a call carrying a
known secret value is refused, and every result, event and approval request a
tool produces has those values redacted.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from coding_harness.daemon.agent.seams import FailedResult, JSONObject, ToolCall, ToolExecutor
from coding_harness.daemon.security.secret_log import KNOWN_SECRETS, install_log_redaction
from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.secret_guard import guarded, leak_refusal

log = logging.getLogger(__name__)

Handler = Callable[..., Awaitable[str]]
"""`async (ctx: ToolContext, **arguments: str) -> str`"""
HandlerT = TypeVar("HandlerT", bound=Handler)
_SHOWN_ARGUMENTS = 120


class DuplicateToolError(ValueError):
    """Two tools were registered under one name."""


@dataclass(kw_only=True, slots=True, frozen=True)
class ToolSpec:
    name: str
    description: str
    params: tuple[tuple[str, str], ...]  # (name, description); all strings, all required
    handler: Handler
    # Parameters that also accept a JSON array or object, handed over as its JSON text.
    loose: frozenset[str] = frozenset()

    @property
    def param_names(self) -> list[str]:
        return [name for name, _ in self.params]

    def schema(self) -> JSONObject:
        """The OpenAI function-calling schema for this tool."""
        properties = {name: {"type": "string", "description": text} for name, text in self.params}
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {
                    "type": "object",
                    "properties": properties,
                    "required": self.param_names,
                },
            },
        }


class ToolRegistry:
    """Tools by name, in registration order."""

    def __init__(self) -> None:
        self._specs: dict[str, ToolSpec] = {}

    def add(self, spec: ToolSpec) -> None:
        if spec.name in self._specs:
            raise DuplicateToolError(f"a tool named {spec.name!r} is already registered")
        self._specs[spec.name] = spec

    def tool(
        self,
        name: str,
        description: str,
        params: Iterable[tuple[str, str]],
        *,
        loose: Iterable[str] = (),
    ) -> Callable[[HandlerT], HandlerT]:
        """Decorator: register an async handler under `name`."""
        fixed, lenient = tuple(params), frozenset(loose)

        def register(handler: HandlerT) -> HandlerT:
            self.add(
                ToolSpec(
                    name=name, description=description, params=fixed, handler=handler, loose=lenient
                )
            )
            return handler

        return register

    def get(self, name: str) -> ToolSpec | None:
        return self._specs.get(name)

    def names(self) -> list[str]:
        return list(self._specs)

    def schemas(self, names: Iterable[str] | None = None) -> list[JSONObject]:
        """Schemas for `names` (default: every tool); an unknown name is a bug."""
        chosen = self.names() if names is None else list(names)
        unknown = [name for name in chosen if name not in self._specs]
        if unknown:
            raise KeyError(f"no such tools: {', '.join(unknown)}")
        return [self._specs[name].schema() for name in chosen]


class BoundTools:
    """The `ToolExecutor` for one turn: a registry's tools bound to a `ToolContext`."""

    def __init__(
        self, registry: ToolRegistry, ctx: ToolContext, names: Iterable[str] | None = None
    ) -> None:
        self.registry = registry
        self.ctx = ctx
        self.names = registry.names() if names is None else list(names)
        registry.schemas(self.names)  # fail early on a name that is not registered
        self._tool_ctx = guarded(ctx)
        # The log outlives the turn: it learns this turn's secrets (and, should the
        # daemon's start-up not have done it, gets its filter).
        KNOWN_SECRETS.learn(ctx.secrets)
        install_log_redaction()

    def schemas(self) -> list[JSONObject]:
        return self.registry.schemas(self.names)

    async def execute(self, call: ToolCall) -> str:
        """Run one call; every problem the model can fix comes back as the result,
        with every secret value the session knows redacted; a refusal stays a
        `FailedResult`, so the loop marks its event failed."""
        result = await self._execute(call)
        redacted = self.ctx.secrets.redact(result)
        return FailedResult(redacted) if isinstance(result, FailedResult) else redacted

    async def _execute(self, call: ToolCall) -> str:
        try:
            spec, arguments = self._check(call)
        except ToolRefusal as refusal:
            return FailedResult(refusal)
        leak = leak_refusal(spec.name, arguments, self.ctx.secrets)
        if leak is not None:
            log.warning("refused a %s call carrying a secret value", spec.name)
            return FailedResult(leak)
        try:
            return await spec.handler(self._tool_ctx, **arguments)
        except ToolRefusal as refusal:
            return FailedResult(refusal)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("tool %r failed", spec.name)
            return FailedResult(f"Error: tool '{spec.name}' failed: {exc}")

    def _check(self, call: ToolCall) -> tuple[ToolSpec, dict[str, str]]:
        shown = _shorten(call.arguments)
        name = call.name.strip()
        if not name:
            raise ToolRefusal(
                "Error: the call was cut off before a tool name arrived, so nothing ran "
                f"(arguments received: {shown}). If you were sending a large text, split "
                "the work into smaller calls."
            )
        spec = self.registry.get(name) if name in self.names else None
        if spec is None:
            raise ToolRefusal(
                f"Error: there is no tool named '{name}'. Available tools: {', '.join(self.names)}."
            )
        return spec, _arguments(spec, call.arguments, shown)


def _arguments(spec: ToolSpec, raw: str, shown: str) -> dict[str, str]:
    """The call's arguments as strings, or `ToolRefusal` naming what was expected."""
    expected = f"Expected a JSON object with: {', '.join(spec.param_names)}."
    try:
        parsed: Any = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as exc:
        raise ToolRefusal(
            f"Error: the arguments for '{spec.name}' are not valid JSON ({exc.msg} at "
            f"character {exc.pos}). {expected} Received: {shown}"
        ) from None
    if not isinstance(parsed, dict):
        raise ToolRefusal(
            f"Error: the arguments for '{spec.name}' must be a JSON object, "
            f"not {_json_kind(parsed)}. {expected} Received: {shown}"
        )
    missing = [name for name in spec.param_names if parsed.get(name) is None]
    if missing:
        raise ToolRefusal(
            f"Error: tool '{spec.name}' is missing required argument(s): "
            f"{', '.join(missing)}. {expected}"
        )
    return {name: _value(spec, name, parsed[name]) for name in spec.param_names}


def _value(spec: ToolSpec, name: str, value: object) -> str:
    if name in spec.loose and isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    return _as_string(spec.name, name, value)


def _as_string(tool: str, name: str, value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    raise ToolRefusal(
        f"Error: argument '{name}' of tool '{tool}' must be a string, not "
        f"{_json_kind(value)}. Send the value as one JSON string."
    )


def _json_kind(value: object) -> str:
    kinds: list[tuple[type | tuple[type, ...], str]] = [
        (dict, "an object"),
        (list, "an array"),
        (str, "a string"),
        (bool, "a boolean"),
        ((int, float), "a number"),
    ]
    if value is None:
        return "null"
    return next((text for kind, text in kinds if isinstance(value, kind)), "an unknown value")


def _shorten(text: str) -> str:
    if len(text) <= _SHOWN_ARGUMENTS:
        return text
    return text[: _SHOWN_ARGUMENTS - 3] + "..."


class OnlyTools:
    """A `ToolExecutor` offering only some of another executor's tools (e.g. read-only)."""

    def __init__(self, inner: ToolExecutor, names: Iterable[str]) -> None:
        self._inner = inner
        self._names = list(names)

    def schemas(self) -> list[JSONObject]:
        return [s for s in self._inner.schemas() if s["function"]["name"] in self._names]

    async def execute(self, call: ToolCall) -> str:
        name = call.name.strip()
        if name and name not in self._names:
            offered = [s["function"]["name"] for s in self.schemas()]
            return FailedResult(
                f"Error: '{name}' is not available here. Available tools: {', '.join(offered)}."
            )
        return await self._inner.execute(call)
