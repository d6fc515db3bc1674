"""The hub without a server process: what `mcp.list` shows, leases and their release,
one link per server whatever the number of sessions, and the idle reaper's count of turns.

Where a link is needed, `FakeLink` stands in for `link.ServerLink` (the hub loads that
class at a server's first use); it starts nothing and reports what it was asked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any, ClassVar

import mcp_types as types
import pytest

from coding_harness.daemon.config.mcp_settings import McpServerSpec
from coding_harness.daemon.mcp import link as link_module
from coding_harness.daemon.mcp.hub import Key, Lease, McpHub, user_servers
from coding_harness.daemon.mcp.states import FAILED, READY, STOPPED, server_entry
from coding_harness.protocol.methods import EventKind

TIME = McpServerSpec(name="time", command="mcp-server-time")
WEB = McpServerSpec(name="web", url="http://127.0.0.1:9/mcp", scope="project")
GET_TIME = types.Tool(
    name="get_current_time",
    description="the time in a zone",
    input_schema={"type": "object", "properties": {"timezone": {"type": "string"}}},
    annotations=types.ToolAnnotations(read_only_hint=True),
)


class FakeLink:
    """A server link that is ready at once (or fails: `failing` names) and lists
    `tools_of[name]` (else `GET_TIME`); `made` keeps every one made."""

    made: ClassVar[list[FakeLink]] = []
    failing: ClassVar[set[str]] = set()
    tools_of: ClassVar[dict[str, list[types.Tool]]] = {}

    def __init__(self, spec: McpServerSpec, on_state: Callable[[Any], None]) -> None:
        self.spec = spec
        self.on_state = on_state
        self.state: str = STOPPED
        self.error: str | None = None
        self.env: Any = {}
        self.last_used = 0.0
        self.stops = 0
        self.starts = 0
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
        return False

    def start(self) -> None:
        self.starts += 1

    async def ready(self) -> bool:
        if self.spec.name in FakeLink.failing:
            self.state, self.error = FAILED, "cannot start: no such program"
            return False
        self.state = READY
        return True

    async def current_tools(self) -> list[types.Tool]:
        return self.tools

    async def stop(self) -> None:
        self.stops += 1
        self.state = STOPPED
        self.stopped.set()

    def describe(self) -> dict[str, Any]:
        return server_entry(self.spec, state=self.state, tools=[t.name for t in self.tools])


@pytest.fixture
def fake_links(monkeypatch: pytest.MonkeyPatch) -> list[FakeLink]:
    """The hub's links are `FakeLink`s; returns the list of those made."""
    monkeypatch.setattr(link_module, "ServerLink", FakeLink)
    monkeypatch.setattr(FakeLink, "made", [])
    monkeypatch.setattr(FakeLink, "failing", set())
    monkeypatch.setattr(FakeLink, "tools_of", {})
    return FakeLink.made


def announcements() -> tuple[McpHub, list[tuple[str, str, dict[str, Any]]]]:
    said: list[tuple[str, str, dict[str, Any]]] = []
    return McpHub(lambda session, kind, data: said.append((session, kind, data))), said


def test_describe_lists_configured_servers_not_held_as_stopped() -> None:
    hub, _ = announcements()
    entries = hub.describe({"web": WEB, "time": TIME})
    assert [(e["name"], e["state"], e["pid"], e["tools"]) for e in entries] == [
        ("time", STOPPED, None, []),
        ("web", STOPPED, None, []),
    ]
    time, web = entries
    assert (time["transport"], time["command"], time["scope"]) == ("stdio", TIME.command, "user")
    assert (web["transport"], web["url"], web["scope"]) == ("http", WEB.url, "project")
    assert hub.describe() == []


def test_restart_of_an_unknown_name_raises_key_error() -> None:
    async def scenario() -> None:
        hub, _ = announcements()
        with pytest.raises(KeyError):
            await hub.restart("nope", {"time": TIME})

    asyncio.run(scenario())


def test_a_lease_without_servers_is_empty() -> None:
    async def scenario() -> Lease:
        hub, _ = announcements()
        return await hub.lease("s1", {}, {})

    lease = asyncio.run(scenario())
    assert (lease.offered, lease.notices, lease.keys, lease.hub) == ([], [], [], None)
    lease.release()  # nothing to give back


class RecordingHub(McpHub):
    def __init__(self) -> None:
        super().__init__(lambda session, kind, data: None)
        self.released: list[list[Key]] = []

    def release(self, keys: Iterable[Key]) -> None:
        self.released.append(list(keys))


def test_a_lease_is_given_back_once_however_often_released() -> None:
    hub = RecordingHub()
    lease = Lease(keys=[TIME.identity()], hub=hub)
    lease.release()
    lease.release()
    assert hub.released == [[TIME.identity()]] and lease.hub is None


def test_user_servers_keeps_the_users_own() -> None:
    assert user_servers({"time": TIME, "web": WEB}) == {"time": TIME}
    assert user_servers({}) == {}


def test_a_lease_offers_each_ready_servers_tools(fake_links: list[FakeLink]) -> None:
    async def scenario() -> Lease:
        hub, _ = announcements()
        lease = await hub.lease("s1", {"time": TIME, "web": WEB}, {"TOKEN": "t"})
        await hub.stop_all()
        return lease

    lease = asyncio.run(scenario())
    assert [(t.name, t.tool, t.read_only) for t in lease.offered] == [
        ("mcp__time__get_current_time", "get_current_time", True),
        ("mcp__web__get_current_time", "get_current_time", True),
    ]
    assert lease.notices == []
    assert [link.env for link in fake_links] == [{"TOKEN": "t"}] * 2


def test_a_server_that_fails_is_named_and_left_out(fake_links: list[FakeLink]) -> None:
    FakeLink.failing = {"web"}

    async def scenario() -> Lease:
        hub, _ = announcements()
        lease = await hub.lease("s1", {"time": TIME, "web": WEB}, {})
        await hub.stop_all()
        return lease

    lease = asyncio.run(scenario())
    assert [t.name for t in lease.offered] == ["mcp__time__get_current_time"]
    assert lease.notices == [
        "the MCP server 'web' is not available (cannot start: no such program); "
        "its tools are left out"
    ]


def test_a_tool_too_long_or_cut_down_is_noted_once(fake_links: list[FakeLink]) -> None:
    odd = types.Tool(name="t" * 80, input_schema={"type": "object"})
    loose = types.Tool(name="any", input_schema={"anyOf": [{"type": "object"}]})
    FakeLink.tools_of = {"time": [odd, loose, GET_TIME]}

    async def scenario() -> tuple[Lease, Lease]:
        hub, _ = announcements()
        first = await hub.lease("s1", {"time": TIME}, {})
        second = await hub.lease("s2", {"time": TIME}, {})
        await hub.stop_all()
        return first, second

    first, second = asyncio.run(scenario())
    assert [t.name for t in first.offered] == ["mcp__time__any", "mcp__time__get_current_time"]
    assert len(first.notices) == 2
    assert "name too long" in first.notices[0] and "mcp__time__any" in first.notices[1]
    assert second.notices == [] and len(second.offered) == 2


def test_sessions_share_one_link_per_server(fake_links: list[FakeLink]) -> None:
    stricter = replace(TIME, approve="never", call_timeout=5.0)

    async def scenario() -> McpHub:
        hub, _ = announcements()
        for session in ("s1", "s2", "s3"):
            (await hub.lease(session, {"time": TIME, "web": WEB}, {})).release()
        await hub.lease("s4", {"time": stricter}, {})
        await hub.stop_all()
        return hub

    hub = asyncio.run(scenario())
    assert [link.spec.name for link in fake_links] == ["time", "web"]
    assert fake_links[0].spec is stricter  # the newest approvals and limits
    assert [e["name"] for e in hub.describe({"time": TIME, "web": WEB})] == ["time", "web"]


def test_a_state_change_goes_to_every_session_that_used_the_server(
    fake_links: list[FakeLink],
) -> None:
    async def scenario() -> list[tuple[str, str, dict[str, Any]]]:
        hub, said = announcements()
        await hub.lease("s1", {"time": TIME}, {})
        await hub.lease("s2", {"time": TIME, "web": WEB}, {})
        time = fake_links[0]
        time.state, time.error = FAILED, "it died"
        time.on_state(time)
        await hub.stop_all()
        return said

    said = asyncio.run(scenario())
    data = {"name": "time", "state": FAILED, "error": "it died"}
    assert said == [("s1", EventKind.MCP_STATE, data), ("s2", EventKind.MCP_STATE, data)]


def test_describe_shows_a_held_server_once(fake_links: list[FakeLink]) -> None:
    async def scenario() -> list[Any]:
        hub, _ = announcements()
        await hub.lease("s1", {"time": TIME}, {})
        entries = hub.describe({"time": TIME, "web": WEB})
        await hub.stop_all()
        return entries

    entries = asyncio.run(scenario())
    assert [(e["name"], e["state"], e["tools"]) for e in entries] == [
        ("time", READY, ["get_current_time"]),
        ("web", STOPPED, []),
    ]


def test_restart_stops_and_starts_the_named_server(fake_links: list[FakeLink]) -> None:
    async def scenario() -> dict[str, Any]:
        hub, _ = announcements()
        await hub.lease("s1", {"time": TIME, "web": WEB}, {})
        entry = await hub.restart("time", {"time": TIME})
        await hub.stop_all()
        return entry

    entry = asyncio.run(scenario())
    assert (entry["name"], entry["state"]) == ("time", READY)
    assert [link.stops for link in fake_links] == [2, 1]  # restart, then stop_all


def test_the_reaper_stops_a_server_only_once_no_turn_holds_it(
    fake_links: list[FakeLink],
) -> None:
    quick = replace(TIME, idle_seconds=0.01)

    async def scenario() -> None:
        hub, _ = announcements()
        first = await hub.lease("s1", {"time": quick}, {})
        second = await hub.lease("s2", {"time": quick}, {})
        first.release()
        first.release()  # must not count as the second turn ending
        (link,) = fake_links
        # The reaper's pass over the link ends before this task runs again: the fake's
        # stop() never waits.
        await asyncio.wait_for(link.inspected.wait(), 5)
        assert link.stops == 0 and link.state == READY
        second.release()
        await asyncio.wait_for(link.stopped.wait(), 5)
        await hub.stop_all()

    asyncio.run(scenario())


def test_only_eager_servers_start_with_the_daemon(fake_links: list[FakeLink]) -> None:
    eager = replace(WEB, name="eager", start="eager")

    async def scenario() -> None:
        hub, _ = announcements()
        hub.start_eager({"time": TIME, "eager": eager})
        await hub.stop_all()

    asyncio.run(scenario())
    assert [(link.spec.name, link.starts) for link in fake_links] == [("eager", 1)]
