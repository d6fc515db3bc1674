"""The socket server's clocks: initialize within a limit, each message within a limit.

A real `SocketServer` on a temporary socket with a minimal method table, and
raw asyncio clients that stay silent, trickle bytes, or send an over-long line
(RELIABILITY 9; issue 10 item 15). The limits are shortened for the test.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.server.rpc import Endpoint, MethodTable
from coding_harness.daemon.server.socket_server import SocketServer
from coding_harness.protocol import errors

INIT = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocol":1}}\n'


def table() -> MethodTable:
    methods = MethodTable()

    @methods.register("initialize")
    async def initialize(conn: Connection, protocol: Any) -> dict[str, Any]:
        conn.initialized = True
        return {"protocol": protocol}

    return methods


@asynccontextmanager
async def serving(path: Path, **limits: Any) -> AsyncIterator[SocketServer]:
    server = SocketServer(path, Endpoint(table()), max_message=limits.pop("max_message", 1000))
    for name, value in limits.items():
        setattr(server, name, value)
    await server.start()
    try:
        yield server
    finally:
        await server.close()


async def closed_within(reader: asyncio.StreamReader, seconds: float) -> bool:
    """Whether the server closes the connection before `seconds` pass (reading what comes)."""
    try:
        async with asyncio.timeout(seconds):
            while await reader.read(65536):
                pass
    except TimeoutError:
        return False
    return True


def test_a_connection_that_never_initializes_is_told_and_closed(socket_path: Path) -> None:
    async def main() -> None:
        async with serving(socket_path, init_timeout=0.3):
            reader, writer = await asyncio.open_unix_connection(str(socket_path))
            line = await asyncio.wait_for(reader.readline(), 5)
            assert json.loads(line)["error"]["code"] == errors.NotInitialized.code
            assert b"no initialize within" in line
            assert await closed_within(reader, 5)
            writer.close()

    asyncio.run(main())


def test_a_message_trickled_a_byte_at_a_time_is_dropped(socket_path: Path) -> None:
    """One byte every 0.1 s keeps an idle timer alive forever; the message deadline holds."""

    async def main() -> None:
        async with serving(socket_path, message_timeout=0.5):
            reader, writer = await asyncio.open_unix_connection(str(socket_path))
            writer.write(INIT)
            await reader.readline()
            writer.write(b'{"jsonrpc":')

            async def trickle() -> None:
                for _ in range(50):
                    await asyncio.sleep(0.1)
                    writer.write(b" ")
                    await writer.drain()

            dripping = asyncio.create_task(trickle())
            assert await closed_within(reader, 5)
            dripping.cancel()
            writer.close()

    asyncio.run(main())


def test_discarding_an_over_long_line_keeps_the_deadline(socket_path: Path) -> None:
    async def main() -> None:
        async with serving(socket_path, max_message=1000, message_timeout=0.5):
            reader, writer = await asyncio.open_unix_connection(str(socket_path))
            writer.write(INIT)
            await reader.readline()
            writer.write(b'{"pad":"' + b"x" * 5000)  # over the limit, then silence
            refused = await asyncio.wait_for(reader.readline(), 5)
            assert b'"code":-32000' in refused
            assert await closed_within(reader, 5)
            writer.close()

    asyncio.run(main())


def test_an_initialized_quiet_connection_stays_open(socket_path: Path) -> None:
    async def main() -> None:
        async with serving(socket_path, init_timeout=0.2, message_timeout=0.2):
            reader, writer = await asyncio.open_unix_connection(str(socket_path))
            writer.write(INIT)
            await reader.readline()
            assert not await closed_within(reader, 0.8)
            writer.write(INIT)  # still served
            assert b"result" in await asyncio.wait_for(reader.readline(), 5)
            writer.close()

    asyncio.run(main())
