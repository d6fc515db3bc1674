"""A turn's tools with undo's looks around each call that may run a command.

`run_shell`, the edit tools (an applied edit is followed by `make check`) and
every MCP tool (a server is a program of its own: a git server commits, a
filesystem server writes) may change files no edit tool wrote;
`CheckpointingTools` wraps the turn's tool executor so that each such call runs
between `TurnCheckpoints.look_before` and `look_after`
(`store/turn_checkpoints.py`), which keep what the call changed.
"""

from __future__ import annotations

from coding_harness.daemon.agent.seams import JSONObject, ToolCall, ToolExecutor
from coding_harness.daemon.mcp.schemas import is_mcp_name
from coding_harness.daemon.store.turn_checkpoints import COMMAND_TOOLS, TurnCheckpoints


class CheckpointingTools:
    """The turn's tools, each call that may run a command between two looks."""

    def __init__(self, inner: ToolExecutor, checkpoints: TurnCheckpoints) -> None:
        self._inner = inner
        self._checkpoints = checkpoints

    def schemas(self) -> list[JSONObject]:
        return self._inner.schemas()

    async def execute(self, call: ToolCall) -> str:
        name = call.name.strip()
        if name not in COMMAND_TOOLS and not is_mcp_name(name):
            return await self._inner.execute(call)
        await self._checkpoints.look_before()
        try:
            return await self._inner.execute(call)
        finally:
            await self._checkpoints.look_after()
