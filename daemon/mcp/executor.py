"""A turn's tools with the MCP servers' tools beside them, each call through the gate.

`McpTools` wraps the turn's executor: its schemas are the built-in ones plus
one function per offered MCP tool (`OfferedTool`, from the hub). A call of an
MCP tool is checked (a JSON object, no secret value in it), put to the user
unless its server's `approve` exempts the tool, the turn runs with `-y` (as
commands are) or the session allows the tool (an "always" answer, `/allow-cmd
mcp__SERVER__TOOL`), then sent to the server; whatever happens (an error
result, no answer in time, a server that died) comes back as a tool result
the model can act on. In the read-only mode only the tools their servers
mark read-only (`readOnlyHint`) are offered or run. Nothing of the SDK is
loaded here until a call is made.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from coding_harness.daemon.agent.seams import (
    ApprovalRequest,
    FailedResult,
    JSONObject,
    ToolCall,
    ToolExecutor,
)
from coding_harness.daemon.config.mcp_settings import McpServerSpec
from coding_harness.daemon.mcp.states import CallFailed
from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.secret_guard import leak_refusal

if TYPE_CHECKING:
    from coding_harness.daemon.mcp.link import ServerLink

_SHOWN_ARGUMENTS = 400


@dataclass(kw_only=True, slots=True, frozen=True)
class OfferedTool:
    """One server tool as this turn offers it."""

    name: str  # mcp__SERVER__TOOL
    tool: str  # the server's own name
    description: str
    schema: dict[str, Any]
    link: ServerLink
    spec: McpServerSpec  # the entry of this turn's config: its approvals and time limit
    read_only: bool

    def function(self) -> JSONObject:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.schema,
            },
        }


class McpTools:
    """The turn's executor, plus the offered MCP tools."""

    def __init__(self, inner: ToolExecutor, offered: Iterable[OfferedTool], ctx: ToolContext):
        self._inner = inner
        self._ctx = ctx
        chosen = [t for t in offered if t.read_only or not ctx.read_only]
        self._offered = {tool.name: tool for tool in chosen}

    def schemas(self) -> list[JSONObject]:
        return [*self._inner.schemas(), *(t.function() for t in self._offered.values())]

    async def execute(self, call: ToolCall) -> str:
        name = call.name.strip()
        offered = self._offered.get(name)
        if offered is None:
            return await self._inner.execute(call)
        return self._ctx.secrets.redact(await self._run(offered, call.arguments))

    async def _run(self, offered: OfferedTool, raw: str) -> str:
        try:
            arguments: Any = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError as exc:
            return (
                f"Error: the arguments for '{offered.name}' are not valid JSON ({exc.msg} at "
                f"character {exc.pos}); send one JSON object as its schema describes."
            )
        if not isinstance(arguments, dict):
            return f"Error: the arguments for '{offered.name}' must be a JSON object."
        # The raw text and the decoded values: JSON escapes (\u0073k-...) hide a value.
        decoded = json.dumps(arguments, ensure_ascii=False)
        checked = {"arguments": raw, "decoded arguments": decoded}
        leak = leak_refusal(offered.name, checked, self._ctx.secrets)
        if leak is not None:
            return leak
        declined = await self._ask(offered, arguments)
        if declined is not None:
            return declined
        from coding_harness.daemon.mcp.results import framed, result_text  # the SDK's types

        try:
            result = await offered.link.call(offered.tool, arguments, offered.spec.call_timeout)
        except CallFailed as exc:
            server = offered.spec.name
            return f"Error: the MCP tool '{offered.name}' (server '{server}') failed: {exc}."
        shown = framed(offered.name, offered.spec.name, result_text(offered.name, result))
        # The server's own "this call failed": the model reads the text, clients the flag.
        return FailedResult(shown) if result.is_error else shown

    async def _ask(self, offered: OfferedTool, arguments: dict[str, Any]) -> str | None:
        """None when the call may go ahead, else the tool result saying why not."""
        if self._ctx.auto_approve or not offered.spec.needs_approval(offered.tool):
            return None
        if offered.name in self._ctx.extra_commands:  # "always", or /allow-cmd mcp__S__T
            return None
        shown = json.dumps(arguments, ensure_ascii=False)
        if len(shown) > _SHOWN_ARGUMENTS:
            shown = shown[: _SHOWN_ARGUMENTS - 3] + "..."
        server = offered.spec.name
        summary = f"call the MCP tool `{offered.name}` (server '{server}') with {shown}"
        request = ApprovalRequest(
            kind="command", path="", diff="", summary=summary, allow=offered.name
        )
        decision = await self._ctx.approver.ask(request)
        if decision.decision == "yes":
            return None
        reason = decision.reason.strip()
        said = f" Reason: {reason}" if reason else ""
        verb = "skipped" if decision.decision == "skip" else "declined"
        return f"the user {verb} the call of '{offered.name}'; it did not run.{said}"
