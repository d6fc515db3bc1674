"""The daemon's MCP servers: one link per configured server, shared by every session.

A server is known by what would start it (`McpServerSpec.identity`): the same
entry in two folders' configs, or used by ten sessions, is one process or one
HTTP connection. `lease` is how a turn gets its tools: it starts the servers
its folder's config names that are not running (in parallel; a turn waits for
them, a server that fails is named in a notice and left out), and counts the
turn as using them until `Lease.release`. The reaper stops a server that has
had no call and no turn for its `idle_seconds`; `stop_all` stops every server
with the daemon. Each state change goes to the sessions whose turns used the
server, as an `mcp.state` event.

The SDK is loaded (through `link.py`) at the first start of a server, so a
daemon with no MCP server configured never loads it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import logging
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from coding_harness.daemon.config.mcp_settings import McpServerSpec
from coding_harness.daemon.mcp.catalog import CatalogTool
from coding_harness.daemon.mcp.executor import OfferedTool
from coding_harness.daemon.mcp.schemas import model_name
from coding_harness.daemon.mcp.states import READY, STOPPED, server_entry
from coding_harness.protocol.methods import EventKind

if TYPE_CHECKING:
    from coding_harness.daemon.mcp.link import ServerLink

log = logging.getLogger(__name__)

Announce = Callable[[str, str, dict[str, Any]], bool | None]
"""`(session id, event kind, data)`: publish an event on a session, if it is still
there; False when it is not (the hub then forgets it)."""
Key = tuple[Any, ...]
REAP_SECONDS = 30.0
LINK_MODULE = "coding_harness.daemon.mcp.link"


@dataclass(kw_only=True, slots=True)
class Lease:
    """The MCP tools one turn may call, and the servers it keeps from idling."""

    offered: list[OfferedTool] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    keys: list[Key] = field(default_factory=list)
    hub: McpHub | None = None

    def release(self) -> None:
        if self.hub is not None:
            self.hub.release(self.keys)
            self.hub = None


class McpHub:
    def __init__(self, announce: Announce) -> None:
        self._announce = announce
        self._links: dict[Key, ServerLink] = {}
        self._users: dict[Key, set[str]] = {}
        self._turns: dict[Key, int] = {}
        self._reaper: asyncio.Task[None] | None = None
        self._period = REAP_SECONDS
        self._warming: asyncio.Task[Any] | None = None
        self._eager: asyncio.Task[None] | None = None
        self._said: set[str] = set()  # notes on tools (a schema cut down), given once

    def warm_up(self) -> None:
        """Load the SDK in a worker thread now (about a second), so that the first
        server of a session about to use one does not wait for it."""
        if self._warming is None and LINK_MODULE not in sys.modules:
            load = asyncio.to_thread(importlib.import_module, LINK_MODULE)
            self._warming = asyncio.get_running_loop().create_task(load)

    def _link(self, spec: McpServerSpec) -> ServerLink:
        key = spec.identity()
        link = self._links.get(key)
        if link is None:
            from coding_harness.daemon.mcp.link import ServerLink  # loads the SDK

            link = self._links[key] = ServerLink(spec, self._changed)
        else:
            link.spec = spec  # the newest approvals and limits of the same server
        return link

    async def lease(
        self, session: str, servers: Mapping[str, McpServerSpec], env: Mapping[str, str]
    ) -> Lease:
        """Start (if need be) the servers of `servers` and offer their tools to one turn."""
        if not servers:
            return Lease()
        await self._sdk_loaded()
        links = [self._link(spec) for spec in servers.values()]
        keys = [link.spec.identity() for link in links]
        for link, key in zip(links, keys, strict=True):
            link.env = env
            self._users.setdefault(key, set()).add(session)
            self._turns[key] = self._turns.get(key, 0) + 1
        lease = Lease(keys=keys, hub=self)
        self._ensure_reaper()
        try:
            ready = await asyncio.gather(*(_ready_for_turn(link) for link in links))
            for link, spec, up in zip(links, servers.values(), ready, strict=True):
                if not up:
                    lease.notices.append(
                        f"the MCP server '{spec.name}' is not available "
                        f"({link.error or link.state}); its tools are left out"
                    )
                    continue
                notes: list[str] = []
                catalog = await link.current_tools()
                lease.offered.extend(_offer(link, spec, catalog.tools, notes))
                lease.notices.extend(note for note in notes if note not in self._said)
                self._said.update(notes)
        except BaseException:  # a turn cancelled while its servers start holds none
            lease.release()
            raise
        return lease

    def release(self, keys: Iterable[Key]) -> None:
        now = time.monotonic()
        for key in keys:
            self._turns[key] = max(0, self._turns.get(key, 0) - 1)
            link = self._links.get(key)
            if link is not None:
                link.last_used = now

    def describe(self, configured: Mapping[str, McpServerSpec] | None = None) -> list[Any]:
        """`mcp.list`'s entries: every server held, then those `configured` not started."""
        entries = [link.describe() for link in self._links.values()]
        for spec in (configured or {}).values():
            if spec.identity() not in self._links:
                entries.append(server_entry(spec))
        return sorted(entries, key=lambda entry: (entry["name"], entry["scope"]))

    async def restart(self, name: str, configured: Mapping[str, McpServerSpec]) -> dict[str, Any]:
        """Stop and start the server `name` (every one held by that name, and the one
        `configured` names); `KeyError` when no server has that name."""
        links = [link for link in self._links.values() if link.spec.name == name]
        if name in configured:
            await self._sdk_loaded()
            chosen = self._link(configured[name])
            links = [chosen, *(link for link in links if link is not chosen)]
        if not links:
            raise KeyError(name)
        await asyncio.gather(*(link.stop() for link in links))
        await asyncio.gather(*(link.ready() for link in links))
        self._ensure_reaper()
        entry: dict[str, Any] = links[0].describe()
        return entry

    def start_eager(self, servers: Mapping[str, McpServerSpec]) -> None:
        """Start the servers marked `"start": "eager"` now, without waiting for them;
        with any server configured, load the SDK meanwhile."""
        if servers:
            self.warm_up()
        eager = [spec for spec in servers.values() if spec.start == "eager"]
        if eager:
            self._eager = asyncio.get_running_loop().create_task(self._start(eager))

    async def _start(self, specs: Iterable[McpServerSpec]) -> None:
        await self._sdk_loaded()
        for spec in specs:
            self._link(spec).start()
        self._ensure_reaper()

    async def _sdk_loaded(self) -> None:
        """The SDK imported (about a second) in a worker thread, never on the event
        loop, where it would hold up every session."""
        self.warm_up()
        if self._warming is not None:
            await asyncio.shield(self._warming)

    def tool_sizes(self, servers: Mapping[str, McpServerSpec]) -> list[dict[str, Any]]:
        """What the tool schemas of the running servers of `servers` take of the context:
        `{name, tools, chars}` per server (a stopped server offers nothing yet)."""
        sizes: list[dict[str, Any]] = []
        for spec in servers.values():
            link = self._links.get(spec.identity())
            if link is None or link.state != READY:
                continue
            offered = _offer(link, spec, link.catalog.tools, [])
            chars = sum(len(json.dumps(tool.function())) for tool in offered)
            sizes.append({"name": spec.name, "tools": len(offered), "chars": chars})
        return sizes

    async def stop_all(self) -> None:
        if self._eager is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await self._eager  # the eager servers' start, which these stops must follow
        if self._reaper is not None:
            self._reaper.cancel()
        await asyncio.gather(*(link.stop() for link in self._links.values()))

    def _changed(self, link: ServerLink) -> None:
        data = {"name": link.spec.name, "state": link.state, "error": link.error}
        users = self._users.get(link.spec.identity(), set())
        for session in sorted(users):
            if self._announce(session, EventKind.MCP_STATE, data) is False:
                users.discard(session)  # closed: no need to remember it

    def _ensure_reaper(self) -> None:
        """Run the reaper, at the pace the shortest `idle_seconds` now held needs."""
        period = self._reap_period()
        if self._reaper is not None and not self._reaper.done():
            if period >= self._period:
                return
            self._reaper.cancel()
        self._period = period
        self._reaper = asyncio.get_running_loop().create_task(self._reap())

    async def _reap(self) -> None:
        while True:
            await asyncio.sleep(self._period)
            now = time.monotonic()
            for key, link in list(self._links.items()):
                idle = now - link.last_used
                in_use = link.busy or self._turns.get(key, 0)
                if link.state != STOPPED and not in_use and idle > link.spec.idle_seconds:
                    log.info("stopping the idle MCP server %r", link.spec.name)
                    with contextlib.suppress(Exception):
                        await link.stop()

    def _reap_period(self) -> float:
        shortest = min((link.spec.idle_seconds for link in self._links.values()), default=600)
        return max(0.2, min(REAP_SECONDS, shortest / 4))


async def _ready_for_turn(link: ServerLink) -> bool:
    """Wait for a server starting or just died (a restart is quick); not for one that
    keeps failing, which would hold up every turn for its whole start limit."""
    return False if link.ailing() else await link.ready()


def _offer(
    link: ServerLink, spec: McpServerSpec, tools: Iterable[CatalogTool], notices: list[str]
) -> list[OfferedTool]:
    """The tools of `link` as a turn whose config has `spec` offers them (its
    approvals, not another folder's entry for the same server). Their schemas were
    converted when the list was fetched: nothing here walks one."""
    offered: list[OfferedTool] = []
    server = spec.name
    taken: dict[str, str] = {}
    for entry in tools:
        tool = entry.tool
        name = model_name(server, tool.name)
        if name is None:
            notices.append(f"the MCP tool '{tool.name}' of '{server}' has a name too long to offer")
            continue
        if name in taken:
            notices.append(
                f"the MCP tools '{taken[name]}' and '{tool.name}' of '{server}' both become "
                f"'{name}'; only the first is offered"
            )
            continue
        taken[name] = tool.name
        if entry.note:
            notices.append(f"the MCP tool '{name}': {entry.note}")
        annotations = tool.annotations
        offered.append(
            OfferedTool(
                name=name,
                tool=tool.name,
                description=(tool.description or tool.title or tool.name)[:2000],
                schema=entry.schema,
                link=link,
                spec=spec,
                read_only=bool(annotations is not None and annotations.read_only_hint),
            )
        )
    return offered


def user_servers(servers: Mapping[str, McpServerSpec]) -> dict[str, McpServerSpec]:
    """The servers of the user's own config file (those a daemon may start unasked)."""
    return {name: spec for name, spec in servers.items() if spec.scope == "user"}
