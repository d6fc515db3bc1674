"""The first request's budget on a small window: the same tools, said in fewer tokens.

A window of 16k tokens or less (`context/window_fit.py`) gets a first request
(system prompt, tool schemas, repo map, notes) of about 1,500 tokens:

- `SmallWindowTools` offers the tools with one-line descriptions and terse
  parameters, and leaves out what the turn can do without: propose_edit
  (write_file and replace_text do its work through the same gate), the web
  tools when no search engine is configured, and MCP tools unless the request
  names their server or tool. Only the schemas change: a call to a tool left
  out still runs, through the same gate, as every other call does;
- the repo map gets `MAP_TOKENS` at most and the notes `NOTES_TOKENS`
  (`map_tokens`, `notes_lines`); the system prompt is the short one
  (`agent/prompts.py`); compaction starts earlier (`TurnWindow.compact_at`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from coding_harness.daemon.agent.seams import JSONObject, ToolCall, ToolExecutor
from coding_harness.daemon.tools.shell.run_shell import ALLOWED

MAP_TOKENS = 256
NOTES_TOKENS = 120
MCP_DESCRIPTION_CHARS = 100
LEFT_OUT = frozenset({"propose_edit"})
WEB_TOOLS = frozenset({"fetch_url", "web_search"})
_PATH = "relative to the workspace"

# name -> (description, {parameter: description}); parameters keep their names and order.
SHORT: dict[str, tuple[str, dict[str, str]]] = {
    "read_file": ("Read a file.", {"path": _PATH}),
    "list_dir": ("List a folder; '/' marks subfolders.", {"path": _PATH}),
    "grep": (
        "Search files for a regex (ripgrep syntax); prints path:line:text.",
        {"pattern": "regex", "path": "folder or file"},
    ),
    "find_symbol": ("Where a name is defined and used.", {"name": "exact name"}),
    "run_shell": (
        f"Run one command, no shell (no pipes, &&, redirections). Programs: {', '.join(ALLOWED)}.",
        {"command": "e.g. 'make test'"},
    ),
    "write_file": (
        "Create or replace a whole file (read it first). The user reviews the diff.",
        {"path": _PATH, "content": "the whole new text"},
    ),
    "replace_text": (
        "Replace one exact snippet of a file (it must occur once). The user reviews the diff.",
        {"path": _PATH, "old_text": "exact current text", "new_text": "replacement"},
    ),
    "commit_plan": ("Write your plan for a multi-step change.", {"steps": "one step per line"}),
    "fetch_url": ("Fetch a web page's text.", {"url": "http(s) address"}),
    "web_search": ("Search the web.", {"query": "search words"}),
}


def map_tokens(budget: int) -> int:
    return min(budget, MAP_TOKENS)


def notes_lines(lines: list[str]) -> list[str]:
    """The newest notes that fit `NOTES_TOKENS` (about four characters a token)."""
    room, kept = NOTES_TOKENS * 4, []
    for line in lines:
        if len(line) + 1 > room:
            break
        room -= len(line) + 1
        kept.append(line)
    return kept


class SmallWindowTools:
    """A `ToolExecutor` offering `inner`'s tools in short, some left out."""

    def __init__(self, inner: ToolExecutor, *, web: bool, request: str) -> None:
        self._inner = inner
        self._kept = _keeper(web, request)

    def schemas(self) -> list[JSONObject]:
        return [_short(s) for s in self._inner.schemas() if self._kept(_name(s))]

    async def execute(self, call: ToolCall) -> str:
        """Every call runs as before: a tool left out of the schemas still works when a
        model names it anyway (the same gate, the same checks)."""
        return await self._inner.execute(call)


def small_schemas(schemas: list[JSONObject], *, web: bool, request: str = "") -> list[JSONObject]:
    """`schemas` as a small window's turn offers them (`/context` estimates with it)."""
    kept = _keeper(web, request)
    return [_short(s) for s in schemas if kept(_name(s))]


def _keeper(web: bool, request: str) -> Callable[[str], bool]:
    words = set(re.findall(r"[\w.-]+", request.lower()))

    def kept(name: str) -> bool:
        if name in LEFT_OUT or (name in WEB_TOOLS and not web):
            return False
        if name.startswith("mcp__"):  # offered when the request names its server or tool
            return any(part.lower() in words for part in name.split("__")[1:])
        return True

    return kept


def _name(schema: JSONObject) -> str:
    return str((schema.get("function") or {}).get("name", ""))


def _short(schema: JSONObject) -> JSONObject:
    function = dict(schema.get("function") or {})
    name = str(function.get("name", ""))
    short = SHORT.get(name)
    if short is None:  # an MCP tool: its own schema, its description cut
        text = str(function.get("description") or "")
        function["description"] = text[:MCP_DESCRIPTION_CHARS]
        return {**schema, "function": function}
    description, params = short
    parameters = function.get("parameters") or {}
    names: Iterable[str] = (parameters.get("properties") or {}).keys()
    function["description"] = description
    function["parameters"] = {
        "type": "object",
        "properties": {n: {"type": "string", "description": params.get(n, n)} for n in names},
        "required": list(parameters.get("required") or []),
    }
    return {**schema, "function": function}
