"""One server link against real processes: what a user sees when a server will not start.

These drive `ServerLink` (daemon/mcp/link.py) in-process, with real programs:
the real `mcp-server-time`, a command that does not exist, a server that dies
at once saying why, one that never answers the handshake.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import psutil
import pytest

from coding_harness.daemon.config.mcp_settings import McpServerSpec
from coding_harness.daemon.mcp import link as link_module
from coding_harness.daemon.mcp.link import ServerLink
from coding_harness.daemon.mcp.states import FAILED, READY, STOPPED

pytestmark = pytest.mark.integration

TIME_SERVER = str(Path(sys.executable).parent / "mcp-server-time")


def _link(**spec: object) -> tuple[ServerLink, list[str]]:
    seen: list[str] = []
    spec_ = McpServerSpec(name="s", **spec)  # type: ignore[arg-type]
    link = ServerLink(spec_, lambda changed: seen.append(changed.state))
    return link, seen


def test_a_missing_command_fails_naming_it() -> None:
    async def scenario() -> None:
        link, seen = _link(command="/nowhere/mcp-server-none")
        assert not await link.ready()
        assert link.state == FAILED
        assert "/nowhere/mcp-server-none" in (link.error or "")
        assert seen[:2] == ["starting", "failed"]
        await link.stop()
        assert link.state == STOPPED

    asyncio.run(scenario())


def test_a_server_that_dies_at_once_fails_with_what_it_said() -> None:
    async def scenario() -> None:
        link, _ = _link(command="/bin/sh", args=("-c", "echo 'no config for me' >&2; exit 3"))
        assert not await link.ready()
        assert "no config for me" in (link.error or "")
        await link.stop()

    asyncio.run(scenario())


def test_a_server_that_never_answers_fails_within_the_start_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(link_module, "START_TIMEOUT", 1.0)

    async def scenario() -> None:
        link, _ = _link(command="/bin/sh", args=("-c", "exec sleep 60"))
        assert not await link.ready(within=10)
        assert link.state == FAILED
        await link.stop()

    asyncio.run(scenario())


def test_a_killed_server_comes_back_and_stop_ends_it() -> None:
    async def scenario() -> None:
        link, seen = _link(command=TIME_SERVER)
        assert await link.ready()
        first = link.pid
        assert first is not None
        psutil.Process(first).kill()
        await asyncio.sleep(1.0)  # the watch sees it within half a second
        result = await link.call("get_current_time", {"timezone": "UTC"})
        assert "datetime" in result.content[0].text  # type: ignore[union-attr]
        assert link.pid not in (None, first)
        assert "failed" in seen and seen[-1] == READY
        second = link.pid
        await link.stop()
        assert second is not None and not psutil.pid_exists(second)

    asyncio.run(scenario())


def test_a_server_that_keeps_failing_is_not_waited_for_by_turns() -> None:
    from coding_harness.daemon.mcp.hub import McpHub

    async def scenario() -> None:
        spec = McpServerSpec(name="broken", command="/bin/sh", args=("-c", "exit 3"))
        hub = McpHub(lambda session, kind, data: None)
        first = await hub.lease("s1", {"broken": spec}, {})
        assert first.offered == [] and "broken" in first.notices[0]
        first.release()
        [link] = hub._links.values()
        for _ in range(100):  # its first restart comes after half a second
            if link.failures >= 2:
                break
            await asyncio.sleep(0.05)
        assert link.ailing()
        second = await hub.lease("s1", {"broken": spec}, {})
        assert link.state == FAILED  # the turn did not start it again and wait
        assert "not available" in second.notices[0]
        second.release()
        await hub.stop_all()

    asyncio.run(scenario())
