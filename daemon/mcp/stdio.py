"""A stdio MCP server as the SDK's `Client` takes it, with every message capped.

The SDK's own `stdio_client` joins the server's output until a newline comes,
however long that takes: a server printing one endless line grows the daemon
without bound. This transport is the same exchange (newline-delimited JSON-RPC
on the process's stdin and stdout, the process in a session of its own) read
through `limits.LineSplitter`: past `MAX_MESSAGE_BYTES` the line is dropped,
the breach recorded on the `MessageCap`, and the read stream closed, so the
calls in flight fail at once and the link starts the server again. A line
past `offload.CONDENSE_ABOVE` is not parsed here: the condensing child makes
it small first (the writer tells the link's `Condenser` which requests are in
flight, so that it knows a tool list's answer).

Its standard error comes through a pipe into `errlog`, which is emptied before
it would pass `ERRLOG_CAP`; the pipe is read at most `ERR_CHUNK` bytes per
`ERR_PAUSE`, so a server flooding it waits on the pipe, and neither the disk
nor the event loop carries the flood.

The process gets the SDK's short list of inherited variables (`HOME`, `PATH`,
...) plus the entry's `env`, never the daemon's own; no descriptor of the
daemon's but its three pipes. On the way out its stdin closes and it has
`EXIT_GRACE` seconds to go; then its process group is terminated (at once
after a breach: a server that floods its output is not waited for).
"""

from __future__ import annotations

import contextlib
import json
import logging
import subprocess
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, TextIO

import anyio
import mcp_types as types
from anyio.abc import Process
from mcp.client.stdio import get_default_environment
from mcp.os.posix.utilities import terminate_posix_process_tree
from mcp.shared.message import SessionMessage

from coding_harness.daemon.mcp.limits import LineSplitter, MessageCap, MessageTooLarge
from coding_harness.daemon.mcp.offload import CONDENSE_ABOVE, CondenseFailed, Condenser

log = logging.getLogger(__name__)

EXIT_GRACE = 2.0  # seconds a server has to exit once its stdin closed (the SDK's figure)
KILL_GRACE = 2.0  # seconds between SIGTERM and SIGKILL of its process group
READ_CHUNK = 65536
ERRLOG_CAP = 1_000_000  # bytes of a server's standard error kept on disk
ERR_CHUNK = 65536
ERR_PAUSE = 0.01  # seconds between two reads of the standard error: at most 6.5 MB/s
_DELIVERY = Exception | SessionMessage


@asynccontextmanager
async def capped_stdio_client(
    command: str,
    args: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str | None,
    errlog: TextIO,
    cap: MessageCap,
    condenser: Condenser,
) -> AsyncIterator[tuple[Any, Any]]:
    """Start the server and yield the SDK's (read stream, write stream) pair."""
    process = await anyio.open_process(
        [command, *args],
        env={**get_default_environment(), **env},
        stderr=subprocess.PIPE,
        cwd=cwd,
        start_new_session=True,
    )
    to_session, read_stream = anyio.create_memory_object_stream[_DELIVERY](0)
    write_stream, from_session = anyio.create_memory_object_stream[SessionMessage](0)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_read, process, to_session, cap, condenser)
        tasks.start_soon(_write, process, from_session, to_session, condenser)
        tasks.start_soon(_keep_errors, process, errlog)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                read_stream.close()  # the reader drops what comes from here on
                write_stream.close()
                await _stop(process, graceful=cap.breach is None)
                for stream in (read_stream, write_stream, to_session, from_session):
                    await stream.aclose()
            tasks.cancel_scope.cancel()


async def _read(process: Process, to_session: Any, cap: MessageCap, condenser: Condenser) -> None:
    """Deliver each line; once the session is gone, read on (and drop) until the server
    ends, so that it is not held on a full pipe; stop at a breach (it is not waited for)."""
    assert process.stdout is not None
    lines = LineSplitter(cap)
    delivering = True
    try:
        while True:
            chunk = await process.stdout.receive(READ_CHUNK)
            if not delivering:
                continue
            for line in lines.feed(chunk):
                message = await _message(line, condenser) if delivering else None
                if message is not None:
                    try:
                        await to_session.send(message)
                    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                        delivering = False
    except MessageTooLarge:
        log.warning("MCP server %d: %s", process.pid, cap.breach)
    except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass  # the server closed its output, or our own shutdown closed the pipe
    except OSError as exc:
        log.debug("MCP server %d: its output broke off (%s)", process.pid, exc)
    finally:
        await to_session.aclose()


async def _message(line: bytes, condenser: Condenser) -> SessionMessage | Exception | None:
    """What to deliver of one line: a big one is condensed in a child first (None:
    nothing is left of it to deliver)."""
    if len(line) > CONDENSE_ABOVE:
        try:
            line = await condenser.condense(line)
        except CondenseFailed as exc:
            log.warning("MCP server %s: a message was dropped: %s", condenser.name, exc)
            return None
    if not line.strip():
        return None
    condenser.parsed_here(len(line))
    message = parse(line)
    if isinstance(message, SessionMessage):
        condenser.answered(getattr(message.message, "id", None))
    return message


def parse(line: bytes) -> SessionMessage | Exception:
    """One line as a JSON-RPC message, or the error the session reports for it. The
    standard decoder builds the objects (several times quicker than the SDK's own
    path on a long listing, which holds the event loop as long as it runs)."""
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_python(json.loads(line)))
    except ValueError as exc:  # invalid JSON, or not a JSON-RPC message
        return exc


async def _write(
    process: Process, from_session: Any, to_session: Any, condenser: Condenser
) -> None:
    assert process.stdin is not None
    try:
        async with from_session:
            async for message in from_session:
                if isinstance(message.message, types.JSONRPCRequest):
                    condenser.sent(message.message.id, message.message.method)
                text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                await process.stdin.send(text.encode() + b"\n")
    except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        await to_session.aclose()  # the server stopped reading: the session sees the end


async def _keep_errors(process: Process, errlog: TextIO) -> None:
    """Copy the server's standard error to `errlog`, emptied before it passes the cap."""
    assert process.stderr is not None
    with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, OSError, ValueError):
        while True:
            chunk = await process.stderr.receive(ERR_CHUNK)
            if errlog.tell() + len(chunk) > ERRLOG_CAP:
                errlog.seek(0)
                errlog.truncate(0)
            errlog.write(chunk.decode(errors="replace"))
            errlog.flush()
            await anyio.sleep(ERR_PAUSE)


async def _stop(process: Process, *, graceful: bool) -> None:
    """Close stdin, give the server `EXIT_GRACE` seconds (none if not `graceful`),
    then terminate its whole process group."""
    assert process.stdin is not None and process.stdout is not None
    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdin.aclose()
    if not graceful or not await _exited(process, EXIT_GRACE):
        await terminate_posix_process_tree(process, KILL_GRACE)
    with anyio.move_on_after(KILL_GRACE):
        await process.aclose()  # its pipes and transport (closing kills it, if need be)


async def _exited(process: Process, within: float) -> bool:
    """Whether the process ended within `within` seconds (by its return code: on 3.11
    `wait` also waits for its pipes, which a child of the server may hold)."""
    with anyio.move_on_after(within):
        while process.returncode is None:  # noqa: ASYNC110 - no event says it exited
            await anyio.sleep(0.01)
    return process.returncode is not None
