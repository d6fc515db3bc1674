"""One MCP server the daemon holds: its connection, its state, its tool list.

A `ServerLink` runs its server in a task of its own (the SDK's client must be
entered and left in one task): start, handshake, tool listing, then a watch
until it is asked to stop or the server dies. A server that fails or dies is
started again after a pause that doubles each time (`RESTART_PAUSES`); one that
stayed up `STABLE_SECONDS` starts the count again; after the last pause it stays
`failed` until the next use asks for it (`ready`). Tool calls come from any
task (`call`) and are bounded by the entry's `call_timeout`.

The tool list is fetched once per start and kept, as a `catalog.Catalog` built
off the event loop (`listing.py`; a big page is condensed in a child); it
is fetched again when the server says it changed (a list-changed notification,
or a `subscriptions/listen` event on 2026 connections) or its cache hint
(`ttlMs`, at least `MIN_TOOLS_TTL`) runs out. Each connection has a
`MessageCap`: a message past it fails the call in flight with one line, ends
the connection and starts the server again. States are
`stopped`, `starting`, `ready` and `failed` (with a one-line `error`); each change
is reported through `on_state`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import tempfile
import time
from collections.abc import Callable, Mapping
from typing import IO, Any, TextIO

import mcp_types as types
from mcp import Client
from mcp.shared.exceptions import MCPError

from coding_harness.daemon.config.mcp_settings import McpServerSpec
from coding_harness.daemon.mcp.catalog import Catalog
from coding_harness.daemon.mcp.limits import MessageCap
from coding_harness.daemon.mcp.listing import fetch_catalog
from coding_harness.daemon.mcp.offload import Condenser
from coding_harness.daemon.mcp.states import (
    FAILED,
    READY,
    STARTING,
    STOPPED,
    CallFailed,
    server_entry,
)
from coding_harness.daemon.mcp.transport import (
    START_TIMEOUT,
    find_pid,
    is_running,
    new_marker,
    open_client,
    stderr_tail,
)
from coding_harness.daemon.tools.shell.containment import command_keeper

log = logging.getLogger(__name__)

RESTART_PAUSES = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0)
STABLE_SECONDS = 60.0
WATCH_SECONDS = 0.5
STDERR_CAP = 1_000_000
# The shortest a server's cache hint may keep its tool list: a hint of 1 ms would
# have every turn fetch (and convert) the list again.
MIN_TOOLS_TTL = 5.0


class ServerLink:
    def __init__(self, spec: McpServerSpec, on_state: Callable[[ServerLink], None]) -> None:
        self.spec = spec
        self.state = STOPPED
        self.error: str | None = None
        self.pid: int | None = None
        self.tools: list[types.Tool] = []  # those offered (the catalog's)
        self.catalog = Catalog()
        self.started_at: float | None = None
        self.calls = 0
        self.last_used = time.monotonic()
        self.busy = 0  # calls in flight
        self.failures = 0  # failed starts in a row (a death after a stable run counts 1)
        self.env: Mapping[str, str] = {}
        self._on_state = on_state
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._changed = asyncio.Event()
        self._wake = asyncio.Event()
        self._tools_stale = False
        self._tools_expire: float | None = None
        self._cap = MessageCap(on_breach=self._wake.set)  # the current connection's
        self._condenser = Condenser(spec.name)

    def describe(self) -> dict[str, Any]:
        return server_entry(
            self.spec,
            state=self.state,
            pid=self.pid,
            tools=[tool.name for tool in self.tools],
            error=self.error,
            started_at=self.started_at,
            calls=self.calls,
            dropped=list(self.catalog.dropped),
            dropped_count=self.catalog.dropped_count,
        )

    def start(self) -> None:
        """Start the server unless it runs; a server pausing before a restart tries now."""
        self._stopping = False
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())
        else:
            self._wake.set()

    def ailing(self) -> bool:
        """Failed more than once in a row: a turn should not wait for it. It is retried
        in the background (started again if it had given up)."""
        if self.state != FAILED or self.failures < 2:
            return False
        if self._task is None or self._task.done():
            self.start()
        return True

    async def ready(self, within: float = START_TIMEOUT + 5) -> bool:
        """Start if need be; True once ready, False when this start (or restart) failed."""
        self.last_used = time.monotonic()
        if self._usable():
            return True
        self.start()
        deadline = time.monotonic() + within
        while not self._usable():
            changed = self._changed
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), remaining)
            if self.state == FAILED:
                return False
        return True

    def _usable(self) -> bool:
        """Ready, and its connection not given up (a message past the cap ends it)."""
        return self.state == READY and self._cap.breach is None

    async def call(
        self, tool: str, arguments: dict[str, Any], limit: float | None = None
    ) -> types.CallToolResult:
        """The server's result for one call, within `limit` seconds (default: the
        entry's `call_timeout`); `CallFailed` when there is none."""
        if not await self.ready():
            raise CallFailed(f"the server is not running ({self.error or self.state})")
        client, cap = self._client, self._cap
        assert client is not None
        too_big = cap.check_outgoing(len(json.dumps(arguments, ensure_ascii=False).encode()))
        if too_big is not None:
            raise CallFailed(too_big)
        timeout = limit or self.spec.call_timeout
        self.busy += 1
        try:
            return await asyncio.wait_for(
                client.call_tool(tool, arguments, read_timeout_seconds=timeout), timeout + 1
            )
        except TimeoutError:
            raise CallFailed(f"no answer within {timeout:g} s; the call was abandoned") from None
        except MCPError as exc:
            said = f"the server answered with an error: {exc.message}"
            raise CallFailed(cap.breach or said) from None
        except (OSError, RuntimeError, ValueError) as exc:
            self._wake.set()  # the watch looks at once whether the server is still there
            raise CallFailed(cap.breach or f"the call broke off ({_one_line(exc)})") from None
        finally:
            self.busy -= 1
            self.calls += 1
            self.last_used = time.monotonic()

    async def stop(self) -> None:
        self._stopping = True
        self._wake.set()
        task = self._task
        if task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(task), 10)
            if not task.done():
                task.cancel()
        self._set(STOPPED)

    def _set(self, state: str, error: str | None = None) -> None:
        if (state, error) == (self.state, self.error):
            return
        self.state, self.error = state, error
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()
        self._on_state(self)

    async def _run(self) -> None:
        self.failures = 0
        while not self._stopping:
            began = time.monotonic()
            self._set(STARTING)
            error = await self._attempt()
            if self._stopping:
                break
            up = time.monotonic() - began
            failures = self.failures = 1 if up >= STABLE_SECONDS else self.failures + 1
            if self._cap.breach is not None and failures == 1:
                log.warning("MCP server %r restarted: %s", self.spec.name, error)
                continue  # at once: the next call should find it up (twice in a row fails)
            self._set(FAILED, error)
            log.warning("MCP server %r failed: %s", self.spec.name, error)
            if failures > len(RESTART_PAUSES):
                return
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), RESTART_PAUSES[failures - 1])
        self._set(STOPPED)

    async def _attempt(self) -> str:
        """Run the server once; returns why it ended (empty when asked to stop)."""
        marker = new_marker(self.spec.name)
        self._cap = MessageCap(on_breach=self._wake.set)
        self._condenser = Condenser(self.spec.name)
        keeper = command_keeper()
        keeper.expect(marker)
        with tempfile.TemporaryFile("a+", encoding="utf-8", errors="replace") as stderr:
            try:
                async with asyncio.timeout(START_TIMEOUT + 5) as started:
                    async with open_client(
                        self.spec,
                        marker=marker,
                        stderr=stderr,
                        env=self.env,
                        message_handler=self._on_message,
                        cap=self._cap,
                        condenser=self._condenser,
                    ) as client:
                        started.reschedule(None)
                        return await self._serve(client, marker, stderr)
            except Exception as exc:  # the SDK raises exception groups too
                if self._cap.breach is not None:  # the read stream was closed on it
                    return self._cap.breach
                tail = stderr_tail(stderr)
                return _one_line(exc) + (f"; the server said: {tail}" if tail else "")
            finally:
                keeper.unexpect(marker)
                self._client, self.pid = None, None

    async def _serve(self, client: Client, marker: str, stderr: TextIO) -> str:
        if self.spec.command is not None:
            self.pid = await asyncio.to_thread(find_pid, marker)
            if self.pid is not None:
                command_keeper().own(self.pid)  # the SDK waits for it, not the keeper
            command_keeper().unexpect(marker)
        await self._fetch_tools(client)
        self._client, self.started_at = client, time.time()
        self._set(READY)
        listening = asyncio.get_running_loop().create_task(self._listen(client))
        try:
            gone = await self._watch(client, stderr)
        finally:
            listening.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await listening
        if gone:
            tail = stderr_tail(stderr)
            return gone + (f"; the server said: {tail}" if tail else "")
        return ""

    async def _watch(self, client: Client, stderr: IO[str]) -> str:
        """Wait until asked to stop ('') or the server goes away (why)."""
        while not self._stopping:
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), WATCH_SECONDS)
            if self._stopping:
                break
            if self._cap.breach is not None:
                return self._cap.breach
            if self.pid is not None and not is_running(self.pid):
                return f"the server process {self.pid} exited"
            if self._tools_stale:
                await self._refresh_tools(client)
            if stderr.tell() > STDERR_CAP:
                stderr.truncate(0)
        return ""

    async def current_tools(self) -> Catalog:
        """The tools offered, fetched again first when their cache hint ran out."""
        client = self._client
        expired = self._tools_expire is not None and time.monotonic() > self._tools_expire
        if client is not None and expired:
            await self._refresh_tools(client)
        return self.catalog

    async def _refresh_tools(self, client: Client) -> None:
        try:
            await self._fetch_tools(client)
        except (MCPError, OSError, RuntimeError, TimeoutError) as exc:
            log.warning(
                "MCP server %r: the tool list could not be fetched again: %s",
                self.spec.name,
                _one_line(exc),
            )
            return
        self._on_state(self)

    async def _listen(self, client: Client) -> None:
        """On a 2026 connection, ask to be told when the tool list changes."""
        tools = client.server_capabilities.tools
        if tools is None or not tools.list_changed:
            return
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                async for _event in subscription:
                    self._tools_stale = True
                    self._wake.set()
        except Exception as exc:  # an older protocol, or a server that drops the stream
            log.debug("MCP server %r: no change events (%s)", self.spec.name, _one_line(exc))

    async def _fetch_tools(self, client: Client) -> None:
        """The tool list, made a catalog off the event loop (listing.py)."""
        self._tools_stale = False
        catalog, ttl = await fetch_catalog(client, self._condenser)
        self.catalog, self.tools = catalog, [entry.tool for entry in catalog.tools]
        expiry = max(ttl / 1000, MIN_TOOLS_TTL) if ttl else None
        self._tools_expire = time.monotonic() + expiry if expiry else None

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._tools_stale = True
            self._wake.set()


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _one_line(exc.exceptions[0])
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]
