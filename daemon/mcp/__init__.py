"""MCP servers kept warm by the daemon and shared by every session (docs/mcp.md).

`hub.McpHub` holds one `link.ServerLink` per configured server (one process or
HTTP connection, whatever the number of sessions), starts it at its first use,
restarts it when it dies, stops it when idle and with the daemon. `executor.py`
offers a server's tools to a turn as `mcp__SERVER__TOOL`, through the approval
gate; `schemas.py` and `results.py` translate both ways, `catalog.py` caps and
converts a server's tool list (`listing.py` fetches it), `limits.py` holds the
message cap; a message past 256 KiB is parsed in a child process
(`offload.py` runs `condense.py`). Only `link.py`, `transport.py` and the
transports it opens (`stdio.py`, `http_cap.py`) import the SDK, and the hub
loads them at a server's first start.
"""
