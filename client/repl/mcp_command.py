"""`/mcp` and `/mcp restart NAME` in the REPL: `harness mcp` for the session's folder.

They print what `harness mcp list` and `harness mcp restart` print, over the
REPL's own connection, with the session's folder as `cwd` (asked of the daemon
once), so the servers that folder configures show before a turn starts them.
"""

from __future__ import annotations

import sys

from coding_harness.client.commands.mcp import RESTART_TIMEOUT, print_servers
from coding_harness.client.render.mcp_servers import server_line
from coding_harness.client.repl.session_command import SessionCommand
from coding_harness.protocol import methods

USAGE = "/mcp [restart NAME]: the MCP servers, their state and tools; restart one"


class McpCommand(SessionCommand):
    _cwd: str | None = None  # the session's folder, once asked

    def __call__(self, argument: str) -> None:
        words = argument.split()
        if not words or words == ["list"]:
            listing = self.conn.request(methods.MCP_LIST, self._where())
            servers = [s for s in listing.get("servers") or [] if isinstance(s, dict)]
            print_servers(servers, sys.stdout, plain=not self.style.color)
        elif len(words) == 2 and words[0] == "restart":
            self.style.line(f"restarting {words[1]} ...", "dim")
            params = {"name": words[1], **self._where()}
            answer = self.conn.request(methods.MCP_RESTART, params, timeout=RESTART_TIMEOUT)
            self.style.line(*server_line(answer.get("server") or {}))
        else:
            self.style.line(f"usage: {USAGE}", "yellow")

    def _where(self) -> dict[str, str]:
        """`{cwd}`: the session's folder as the daemon holds it (none if it is gone)."""
        if self._cwd is None:
            sessions = self.conn.request(methods.SESSION_LIST)["sessions"]
            mine = [s for s in sessions if s.get("session") == self.session]
            self._cwd = str(mine[0]["cwd"]) if mine else ""
        return {"cwd": self._cwd} if self._cwd else {}
