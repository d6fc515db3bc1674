"""`mcp.list` and `mcp.restart`: the MCP servers the daemon holds, seen and restarted.

With a `cwd`, the servers that folder's config files name (the user's, and a
trusted project's) are listed too, those not started as `stopped`, and a
restart of one not running starts it from that config.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from coding_harness.daemon.config.mcp_settings import McpServerSpec
from coding_harness.daemon.methods.params import refuse_tool_children, text, workspace_folder
from coding_harness.daemon.methods.parts import MethodParts
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.server.rpc import Handler
from coding_harness.protocol import errors
from coding_harness.protocol import methods as m


def _configured(parts: MethodParts, cwd: Any) -> Mapping[str, McpServerSpec]:
    folder = parts.home if cwd is None else workspace_folder(text("cwd", cwd))
    return parts.configs.get(folder).mcp_servers


async def mcp_list(parts: MethodParts, conn: Connection, cwd: Any = None) -> dict[str, Any]:
    return {"servers": parts.mcp.describe(_configured(parts, cwd))}


async def mcp_restart(
    parts: MethodParts, conn: Connection, name: Any, cwd: Any = None
) -> dict[str, Any]:
    refuse_tool_children(conn)
    wanted = text("name", name)
    configured = _configured(parts, cwd)
    try:
        entry = await parts.mcp.restart(wanted, configured)
    except KeyError:
        names = sorted({*configured, *(e["name"] for e in parts.mcp.describe())})
        known = ", ".join(names) or "none"
        raise errors.InvalidParams(
            f"no MCP server named {wanted!r} (configured: {known}); "
            'add it under "mcp_servers" in ~/.coding_harness.json'
        ) from None
    return {"server": entry}


HANDLERS: dict[str, Handler] = {
    m.MCP_LIST: mcp_list,
    m.MCP_RESTART: mcp_restart,
}
# A restart waits for the server to start: the connection goes on answering meanwhile.
DETACHED = frozenset({m.MCP_RESTART})
