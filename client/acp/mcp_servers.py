"""An editor's MCP servers (ACP's `mcpServers`) handed to the daemon's session.

Editors such as Zed send the MCP servers their user configured with every
`session/new`, `session/load` and `session/resume`. The bridge turns each
into the daemon's `mcp_servers` entry shape and sets them on the session with
`session.configure {mcp_servers}`: the daemon then runs them like the user's
own, one process per server whatever the number of editor threads, each call
through the approval gate. A server over the old HTTP+SSE transport, or one
only the editor can reach (`acp`), is left out and named in the notes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from acp import schema

from coding_harness.client.acp.bridge import Bridge
from coding_harness.protocol import methods


def daemon_entries(servers: Iterable[Any]) -> tuple[dict[str, Any], list[str]]:
    """`{name: entry}` for the daemon, and notes on the servers left out."""
    entries: dict[str, Any] = {}
    left_out: list[str] = []
    for server in servers:
        if isinstance(server, schema.McpServerStdio):
            entries[server.name] = {
                "command": server.command,
                "args": list(server.args),
                "env": {variable.name: variable.value for variable in server.env},
            }
        elif isinstance(server, schema.HttpMcpServer):
            headers = {header.name: header.value for header in server.headers}
            entries[server.name] = {"url": server.url, "headers": headers}
        else:
            left_out.append(str(getattr(server, "name", "?")))
    notes = []
    if left_out:
        notes.append(
            f"MCP servers not used (only stdio and Streamable HTTP servers are): "
            f"{', '.join(left_out)}"
        )
    return entries, notes


async def hand_over(bridge: Bridge, session: str, servers: Iterable[Any] | None) -> list[str]:
    """Set the editor's servers on the daemon's session; the notes for the editor."""
    entries, notes = daemon_entries(servers or ())
    if entries:
        change = {"session": session, "mcp_servers": entries}
        await bridge.ask_daemon(methods.SESSION_CONFIGURE, change)
    return notes
