"""`queue.submit`, `queue.list`, `queue.cancel`: the hub's shared task queue (docs/team.md)."""

from __future__ import annotations

from coding_harness.daemon.server.rpc import Handler

HANDLERS: dict[str, Handler] = {}
