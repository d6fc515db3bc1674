"""The hub without a server process: what `mcp.list` shows, leases and the tools they
offer, one link per server whatever the number of sessions, restarts and eager starts.
Where a link is needed, `FakeLink` (fake_link.py) stands in for the real one."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import mcp_types as types
import pytest

from coding_harness.daemon.mcp.hub import Key, Lease, McpHub, user_servers
from coding_harness.daemon.mcp.states import FAILED, READY, STOPPED
from coding_harness.protocol.methods import EventKind
from tests.unit.daemon.mcp.fake_link import GET_TIME, TIME, WEB, FakeLink, announcements


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


def test_a_closed_session_is_forgotten_at_the_next_state_change(
    fake_links: list[FakeLink],
) -> None:
    told: list[str] = []

    def announce(session: str, kind: str, data: dict[str, Any]) -> bool:
        told.append(session)
        return session != "closed"

    async def scenario() -> None:
        hub = McpHub(announce)
        for session in ("open", "closed"):
            (await hub.lease(session, {"time": TIME}, {})).release()
        (time,) = fake_links
        for state in (FAILED, READY):
            time.state = state
            time.on_state(time)
        await hub.stop_all()

    asyncio.run(scenario())
    assert told == ["closed", "open", "open"]


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


def test_only_eager_servers_start_with_the_daemon(fake_links: list[FakeLink]) -> None:
    eager = replace(WEB, name="eager", start="eager")

    async def scenario() -> None:
        hub, _ = announcements()
        hub.start_eager({"time": TIME, "eager": eager})
        await hub.stop_all()

    asyncio.run(scenario())
    assert [(link.spec.name, link.starts) for link in fake_links] == [("eager", 1)]


def test_tools_whose_names_meet_once_made_safe_are_noted(fake_links: list[FakeLink]) -> None:
    dotted = types.Tool(name="get.time", input_schema={"type": "object"})
    FakeLink.tools_of = {"time": [dotted, GET_TIME.model_copy(update={"name": "get_time"})]}

    async def scenario() -> Lease:
        hub, _ = announcements()
        lease = await hub.lease("s1", {"time": TIME}, {})
        await hub.stop_all()
        return lease

    lease = asyncio.run(scenario())
    names = [tool.name for tool in lease.offered]
    assert len(names) == len(set(names)), names
    assert any("get.time" in notice or "get_time" in notice for notice in lease.notices)


def test_warm_up_loads_the_sdk_in_the_background_once() -> None:
    """Run in a fresh interpreter: this one may have loaded the SDK already."""
    probe = (
        "import asyncio, sys\n"
        "from coding_harness.daemon.mcp.hub import LINK_MODULE, McpHub\n"
        "async def main():\n"
        "    hub = McpHub(lambda *a: None)\n"
        "    before = LINK_MODULE in sys.modules\n"
        "    hub.warm_up()\n"
        "    first = hub._warming\n"
        "    hub.warm_up()\n"
        "    await first\n"
        "    print(before, hub._warming is first, 'mcp' in sys.modules)\n"
        "asyncio.run(main())\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "True"]
