"""A stand-in for `link.ServerLink` (the hub loads that class at a server's first use):
it starts nothing, is ready at once unless told otherwise, and records what it was asked."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, ClassVar

import mcp_types as types

from coding_harness.daemon.config.mcp_settings import McpServerSpec
from coding_harness.daemon.mcp.catalog import Catalog, build_catalog
from coding_harness.daemon.mcp.hub import McpHub
from coding_harness.daemon.mcp.states import FAILED, READY, STARTING, STOPPED, server_entry

TIME = McpServerSpec(name="time", command="mcp-server-time")
WEB = McpServerSpec(name="web", url="http://127.0.0.1:9/mcp", scope="project")
GET_TIME = types.Tool(
    name="get_current_time",
    description="the time in a zone",
    input_schema={"type": "object", "properties": {"timezone": {"type": "string"}}},
    annotations=types.ToolAnnotations(read_only_hint=True),
)


class FakeLink:
    """A server link that is ready at once and lists `tools_of[name]` (else `GET_TIME`).
    By name: `failing` fail to start, `hanging` start until the test sets their `hang`
    (`hung` says one began), `ailing_names` have failed in a row. `made` keeps each one."""

    made: ClassVar[list[FakeLink]] = []
    failing: ClassVar[set[str]] = set()
    tools_of: ClassVar[dict[str, list[types.Tool]]] = {}
    hanging: ClassVar[set[str]] = set()
    ailing_names: ClassVar[set[str]] = set()  # failed starts in a row: not waited for
    hung: ClassVar[asyncio.Event] = asyncio.Event()  # set when a hanging start begins

    def __init__(self, spec: McpServerSpec, on_state: Callable[[Any], None]) -> None:
        self.spec = spec
        self.on_state = on_state
        self.state: str = STOPPED
        self.error: str | None = None
        self.env: Any = {}
        self.last_used = 0.0
        self.stops = 0
        self.starts = 0
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.hang = asyncio.Event() if spec.name in FakeLink.hanging else None
        self.inspected = asyncio.Event()
        self.stopped = asyncio.Event()
        FakeLink.made.append(self)

    @property
    def tools(self) -> list[types.Tool]:
        return FakeLink.tools_of.get(self.spec.name, [GET_TIME])

    @property
    def busy(self) -> int:
        self.inspected.set()  # the reaper looks at every link it holds
        return 0

    def ailing(self) -> bool:
        if self.spec.name not in FakeLink.ailing_names:
            return False
        self.state, self.error = FAILED, "exited with 1"
        return True

    def start(self) -> None:
        self.starts += 1

    async def ready(self) -> bool:
        if self.hang is not None:  # a slow start: waits until the test lets it go
            self.state = STARTING
            FakeLink.hung.set()
            await self.hang.wait()
        if self.spec.name in FakeLink.failing:
            self.state, self.error = FAILED, "cannot start: no such program"
            return False
        self.state = READY
        return True

    @property
    def catalog(self) -> Catalog:
        return build_catalog(self.tools)

    async def current_tools(self) -> Catalog:
        return self.catalog

    async def call(
        self, tool: str, arguments: dict[str, Any], limit: float | None = None
    ) -> types.CallToolResult:
        self.calls.append((tool, arguments))
        return types.CallToolResult(content=[types.TextContent(type="text", text="called")])

    async def stop(self) -> None:
        self.stops += 1
        self.state = STOPPED
        self.stopped.set()

    def describe(self) -> dict[str, Any]:
        return server_entry(self.spec, state=self.state, tools=[t.name for t in self.tools])


def announcements() -> tuple[McpHub, list[tuple[str, str, dict[str, Any]]]]:
    said: list[tuple[str, str, dict[str, Any]]] = []
    return McpHub(lambda session, kind, data: said.append((session, kind, data))), said
