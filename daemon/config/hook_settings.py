"""The `hooks` section of the configuration: the user's commands around tools and turns.

Two forms are read, so a configuration written for Claude Code works unchanged:
the short one, `{"PreToolUse": [{"matcher": "run_shell", "command": "..."}]}`,
and the nested one, `{"PreToolUse": [{"matcher": "...", "hooks": [{"type":
"command", "command": "...", "timeout": 30}]}]}`. Events: `PreToolUse` and
`PostToolUse` (the matcher is a regular expression that must match the whole
tool name, or Claude Code's name for the same tool, `Bash` for run_shell; none,
"" or "*" matches every tool), `UserPromptSubmit` and `Stop`
(no matcher). Each file's hooks are kept, not merged away: the user's file and a
trusted project's file both contribute theirs, in that order. A bad entry is
reported naming its file and key, and left out. The whole section waits for
`harness trust` in a project file (`protocol.trust.SAFE_KEYS` does not list it):
a hook runs a program on the user's machine.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

PRE_TOOL_USE = "PreToolUse"
POST_TOOL_USE = "PostToolUse"
USER_PROMPT_SUBMIT = "UserPromptSubmit"
STOP = "Stop"
HOOK_EVENTS = (PRE_TOOL_USE, POST_TOOL_USE, USER_PROMPT_SUBMIT, STOP)
TOOL_EVENTS = frozenset({PRE_TOOL_USE, POST_TOOL_USE})
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 3600.0
_EVERY_TOOL = ("", "*")
# Claude Code's name for each tool that does the same job: a matcher written for it
# ("Bash", "Edit|Write") takes our tool too. MCP tools are named alike in both.
CLAUDE_CODE_NAMES = {
    "run_shell": "Bash",
    "propose_edit": "Edit",
    "replace_text": "Edit",
    "write_file": "Write",
    "read_file": "Read",
    "list_dir": "LS",
    "grep": "Grep",
    "fetch_url": "WebFetch",
    "web_search": "WebSearch",
}


class HookLayer(Protocol):
    """One config file as the loader holds it (`layers.Layer`)."""

    @property
    def origin(self) -> str: ...

    @property
    def data(self) -> dict[str, Any]: ...


@dataclass(frozen=True, kw_only=True, slots=True)
class HookSpec:
    event: str
    command: str  # a shell command line, run by /bin/sh -c
    matcher: str = ""  # "" matches every tool
    timeout: float = DEFAULT_TIMEOUT
    origin: str = "config"  # the file that declared it

    def matches(self, tool: str | None) -> bool:
        """Whether this hook runs for a call of `tool` (None: an event without a tool)."""
        if self.event not in TOOL_EVENTS or self.matcher in _EVERY_TOOL:
            return True
        if tool is None:
            return False
        names = (tool, CLAUDE_CODE_NAMES.get(tool, tool))
        return any(re.fullmatch(self.matcher, name) is not None for name in names)


@dataclass(frozen=True, kw_only=True, slots=True)
class HookSettings:
    hooks: tuple[HookSpec, ...] = ()

    @property
    def around_tools(self) -> bool:
        """Whether any hook runs before or after tool calls."""
        return any(h.event in TOOL_EVENTS for h in self.hooks)

    def for_event(self, event: str, tool: str | None = None) -> list[HookSpec]:
        return [h for h in self.hooks if h.event == event and h.matches(tool)]


class _Bad(Exception):
    """An entry left out; the message says which rule it broke."""


def parse_hooks(layers: Iterable[HookLayer], problems: list[str]) -> HookSettings:
    """Every file's `hooks`, in layer order; problems name the file and the key."""
    found: list[HookSpec] = []
    for layer in layers:
        raw = layer.data.get("hooks")
        if raw is not None:
            found.extend(_file_hooks(raw, layer.origin, problems))
    return HookSettings(hooks=tuple(found))


def _file_hooks(raw: Any, origin: str, problems: list[str]) -> list[HookSpec]:
    if not isinstance(raw, Mapping):
        problems.append(f"{origin}: hooks must be an object of event names; it was ignored")
        return []
    found: list[HookSpec] = []
    for event, entries in raw.items():
        if event not in HOOK_EVENTS:
            known = ", ".join(HOOK_EVENTS)
            problems.append(f"{origin}: hooks.{event} is not a hook event ({known}); ignored")
            continue
        if not isinstance(entries, list):
            problems.append(f"{origin}: hooks.{event} must be a list of hooks; it was ignored")
            continue
        for index, entry in enumerate(entries):
            key = f"hooks.{event}[{index}]"
            try:
                found.extend(_entry(event, entry, origin, key, problems))
            except _Bad as exc:
                problems.append(f"{origin}: {key} {exc}; this hook was left out")
    return found


def _entry(event: str, entry: Any, origin: str, key: str, problems: list[str]) -> list[HookSpec]:
    """The hooks of one list entry: itself (short form) or its `hooks` (nested form)."""
    if not isinstance(entry, Mapping):
        raise _Bad("must be an object with a command")
    matcher = _matcher(event, entry.get("matcher"))
    if "hooks" not in entry:
        return [_spec(event, matcher, entry, origin)]
    inner = entry["hooks"]
    if not isinstance(inner, list):
        raise _Bad("hooks must be a list of {type, command} objects")
    specs: list[HookSpec] = []
    for index, hook in enumerate(inner):
        try:
            if not isinstance(hook, Mapping):
                raise _Bad("must be an object with a command")
            kind = hook.get("type", "command")
            if kind != "command":
                raise _Bad(f'has type {kind!r}; only "command" hooks are run')
            specs.append(_spec(event, matcher, hook, origin))
        except _Bad as exc:
            problems.append(f"{origin}: {key}.hooks[{index}] {exc}; this hook was left out")
    return specs


def _matcher(event: str, raw: Any) -> str:
    if raw is None or event not in TOOL_EVENTS:
        return ""
    if not isinstance(raw, str):
        raise _Bad("has a matcher that is not a string (a regular expression on tool names)")
    matcher = raw.strip()
    if matcher in _EVERY_TOOL:
        return ""
    try:
        re.compile(matcher)
    except re.error as exc:
        raise _Bad(f"has a matcher that is not a valid regular expression ({exc})") from None
    return matcher


def _spec(event: str, matcher: str, raw: Mapping[str, Any], origin: str) -> HookSpec:
    command = raw.get("command")
    if not isinstance(command, str) or not command.strip():
        raise _Bad("needs a command (a non-empty string)")
    return HookSpec(
        event=event,
        command=command,
        matcher=matcher,
        timeout=_timeout(raw.get("timeout")),
        origin=origin,
    )


def _timeout(raw: Any) -> float:
    if raw is None:
        return DEFAULT_TIMEOUT
    number = isinstance(raw, int | float) and not isinstance(raw, bool)
    if not number or not math.isfinite(raw) or not 0 < raw <= MAX_TIMEOUT:
        raise _Bad(
            f"has a timeout that is not a number of seconds, above 0, {MAX_TIMEOUT:g} at most"
        )
    return float(raw)
