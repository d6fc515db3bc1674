"""The states of an MCP server (as `mcp.list` and the `mcp.state` event name them), and
the one failure a tool call reports; free of the SDK, so the daemon imports it at start."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from coding_harness.daemon.config.mcp_settings import McpServerSpec

STOPPED: Final = "stopped"
STARTING: Final = "starting"
READY: Final = "ready"
FAILED: Final = "failed"


class CallFailed(RuntimeError):
    """A tool call that got no result: the server is down, timed out or broke the protocol."""


def server_entry(spec: McpServerSpec, **live: Any) -> dict[str, Any]:
    """One server as `mcp.list` describes it; `live` overrides the stopped defaults."""
    entry: dict[str, Any] = {
        "name": spec.name,
        "state": STOPPED,
        "pid": None,
        "tools": [],
        "error": None,
        "transport": spec.transport,
        "started_at": None,
        "calls": 0,
        "scope": spec.scope,
        "dropped": [],  # [{tool, reason}]: tools the server lists that are not offered
        "dropped_count": 0,
        **live,
    }
    entry["command" if spec.command is not None else "url"] = spec.command or spec.url
    return entry
