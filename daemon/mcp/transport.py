"""Opening one MCP server with the official SDK: the stdio process or the HTTP link.

A stdio server is started by `stdio.capped_stdio_client` (its own process group;
on shutdown its stdin closes, then the group is terminated) with the SDK's short
list of inherited variables plus the entry's `env`, never the daemon's keys; an
HTTP one is reached with `http_cap.capped_http_client`. Both read no message
past the link's `MessageCap` (limits.py), and hand one past the threshold to
the condensing child through its `Condenser` (offload.py).
Its standard error goes to a file of its own, which `stderr_tail` reads when
the server fails. Each start carries a marker variable, by which `find_pid`
picks the server out of the daemon's children (the SDK does not hand the
process out), and the daemon's process keeper spares it until then
(`CommandKeeper.expect`). An HTTP server gets the entry's headers and, with
`bearer_token_env`, `Authorization: Bearer <the variable's value>`.

This module imports the SDK (as do `stdio.py` and `http_cap.py`); only `link.py`
imports it, and only the hub loads that, at the first start of a server: the
daemon starts without it.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from typing import IO, Any, TextIO

import psutil
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import Implementation

from coding_harness.daemon.config.mcp_settings import McpServerSpec
from coding_harness.daemon.mcp.http_cap import capped_http_client
from coding_harness.daemon.mcp.limits import MessageCap
from coding_harness.daemon.mcp.offload import Condenser
from coding_harness.daemon.mcp.stdio import capped_stdio_client
from coding_harness.daemon.tools.shell.process_tree import EXPECTED_MARKER
from coding_harness.protocol.version import __version__

MARKER_VARIABLE = EXPECTED_MARKER  # the process keeper spares it while it starts
STDERR_TAIL = 600
# The longest the handshake, or the tool listing, of a starting server may take.
START_TIMEOUT = 30.0
CLIENT_INFO = Implementation(name="coding-harness", version=__version__)


def new_marker(name: str) -> str:
    return f"{name}-{secrets.token_hex(12)}"


@asynccontextmanager
async def open_client(
    spec: McpServerSpec,
    *,
    marker: str,
    stderr: TextIO,
    env: Mapping[str, str],
    message_handler: Any,
    cap: MessageCap,
    condenser: Condenser,
) -> AsyncIterator[Client]:
    """A connected, initialized SDK `Client` for `spec`; `env` resolves its token."""
    async with AsyncExitStack() as stack:
        if spec.command is not None:
            variables = {**dict(spec.env), MARKER_VARIABLE: marker}
            transport: Any = capped_stdio_client(
                spec.command,
                spec.args,
                env=variables,
                cwd=spec.cwd,
                errlog=stderr,
                cap=cap,
                condenser=condenser,
            )
        else:
            assert spec.url is not None
            http = await stack.enter_async_context(
                capped_http_client(_headers(spec, env), cap, condenser)
            )
            # The SDK's own per-event limit is set past ours, so that ours (which restarts
            # the link) is the one that trips.
            events = 2 * cap.limit
            transport = streamable_http_client(
                spec.url, http_client=http, max_sse_event_size=events
            )
        client = Client(
            transport,
            read_timeout_seconds=START_TIMEOUT,
            message_handler=message_handler,
            client_info=CLIENT_INFO,
        )
        yield await stack.enter_async_context(client)


def _headers(spec: McpServerSpec, env: Mapping[str, str]) -> dict[str, str]:
    headers = dict(spec.headers)
    if spec.bearer_token_env:
        token = env.get(spec.bearer_token_env) or os.environ.get(spec.bearer_token_env)
        if not token:
            raise MissingToken(
                f"${spec.bearer_token_env} is not set, and the server {spec.name!r} needs it "
                "as its bearer token; export it in the shell you run harness from"
            )
        headers["Authorization"] = f"Bearer {token}"
    return headers


class MissingToken(RuntimeError):
    """The variable `bearer_token_env` names is set nowhere."""


def find_pid(marker: str) -> int | None:
    """The daemon's child process started with `marker`, if it still runs."""
    for child in psutil.Process().children():
        try:
            if child.environ().get(MARKER_VARIABLE) == marker:
                return child.pid
        except (psutil.Error, OSError):
            continue
    return None


def is_running(pid: int) -> bool:
    """Whether `pid` still runs (a zombie, waiting to be reaped, does not)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def stderr_tail(stderr: IO[str]) -> str:
    """The last lines the server wrote to its standard error, on one line."""
    try:
        stderr.flush()
        stderr.seek(0, os.SEEK_END)
        size = stderr.tell()
        stderr.seek(max(0, size - STDERR_TAIL * 4))
        text = stderr.read()
    except (OSError, ValueError):
        return ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return " | ".join(lines)[-STDERR_TAIL:]
