"""The hub and the turns that use its servers, without a process: the idle reaper
stops a server only once no turn holds it, a lease given back twice counts once, a turn
does not wait for a server that keeps failing, nor keeps one when cancelled mid-start."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from coding_harness.daemon.agent.seams import JSONObject, ToolCall
from coding_harness.daemon.mcp.executor import McpTools
from coding_harness.daemon.mcp.hub import Lease
from coding_harness.daemon.mcp.states import READY
from tests.support.tool_context import ScriptedApprover, make_ctx
from tests.unit.daemon.mcp.fake_link import TIME, WEB, FakeLink, announcements


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


def test_a_turn_does_not_wait_for_a_server_that_keeps_failing(
    fake_links: list[FakeLink],
) -> None:
    FakeLink.hanging = {"web"}  # its start would never end
    FakeLink.ailing_names = {"web"}

    async def scenario() -> Lease:
        hub, _ = announcements()
        lease = await asyncio.wait_for(hub.lease("s1", {"time": TIME, "web": WEB}, {}), 5)
        await hub.stop_all()
        return lease

    lease = asyncio.run(scenario())
    assert [t.name for t in lease.offered] == ["mcp__time__get_current_time"]
    assert lease.notices == [
        "the MCP server 'web' is not available (exited with 1); its tools are left out"
    ]


def test_a_turn_cancelled_while_its_servers_start_does_not_keep_them(
    fake_links: list[FakeLink],
) -> None:
    FakeLink.hanging = {"time"}
    quick = replace(TIME, idle_seconds=0.01)

    async def scenario() -> None:
        hub, _ = announcements()
        turn = asyncio.create_task(hub.lease("s1", {"time": quick}, {}))
        await asyncio.wait_for(FakeLink.hung.wait(), 5)
        turn.cancel()  # the user pressed Ctrl-C during the start
        with pytest.raises(asyncio.CancelledError):
            await turn
        (link,) = fake_links
        await asyncio.wait_for(link.inspected.wait(), 5)
        stops = link.stops
        await hub.stop_all()
        assert stops == 1, "the idle reaper left a server no turn holds"

    asyncio.run(scenario())


class NoTools:
    """A turn's own executor with no tools."""

    def schemas(self) -> list[JSONObject]:
        return []

    async def execute(self, call: ToolCall) -> str:
        return f"Error: there is no tool named '{call.name}'."


def test_a_sessions_calls_ask_as_its_own_config_says(
    fake_links: list[FakeLink], tmp_path: Path
) -> None:
    asks = replace(WEB, approve="always", scope="user")
    never = replace(WEB, approve="never", scope="project")  # another folder's .mcp.json
    approver = ScriptedApprover(("no", ""))
    ctx, _ = make_ctx(tmp_path, approver)

    async def scenario() -> str:
        hub, _ = announcements()
        mine = await hub.lease("s1", {"web": asks}, {})
        await hub.lease("s2", {"web": never}, {})
        tools = McpTools(NoTools(), mine.offered, ctx)
        call = ToolCall(id="c1", name="mcp__web__get_current_time", arguments="{}")
        result = await tools.execute(call)
        await hub.stop_all()
        return result

    result = asyncio.run(scenario())
    assert len(approver.requests) == 1 and "declined" in result
    assert fake_links[0].calls == []
