"""`hub.sessions`: the team's sessions, read from the hub (docs/team.md)."""

from __future__ import annotations

from coding_harness.daemon.server.rpc import Handler

HANDLERS: dict[str, Handler] = {}
