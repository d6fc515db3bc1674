"""Requests the daemon sends a client (`Connection.ask`) and the responses routed back.

A real `SocketServer` on a temporary socket with a minimal method table, and a
raw asyncio client playing the editor: it reads the daemon's request and
answers it, answers an error, never answers, hangs up, or sends responses
nothing waits for (which must never be answered: JSON-RPC forbids it).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from coding_harness.daemon.server.asks import AskFailed
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.server.rpc import Endpoint, MethodTable
from coding_harness.daemon.server.socket_server import SocketServer

INIT = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocol":1}}\n'
PING = b'{"jsonrpc":"2.0","id":"p","method":"ping"}\n'
READ = "client.read_text_file"


def table() -> MethodTable:
    methods = MethodTable()

    @methods.register("initialize")
    async def initialize(conn: Connection, protocol: Any) -> dict[str, Any]:
        conn.initialized = True
        return {"protocol": protocol}

    @methods.register("ping")
    async def ping(conn: Connection) -> str:
        return "pong"

    return methods


@dataclass
class Editor:
    """The client end, and the daemon's `Connection` to it."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    conn: Connection

    async def line(self) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(await asyncio.wait_for(self.reader.readline(), 5))
        return message

    async def say(self, message: dict[str, Any]) -> None:
        self.writer.write(json.dumps(message).encode() + b"\n")
        await self.writer.drain()

    async def next_is_pong(self) -> None:
        """The next line the client gets answers its ping: nothing came before it."""
        self.writer.write(PING)
        await self.writer.drain()
        assert await self.line() == {"jsonrpc": "2.0", "result": "pong", "id": "p"}


@asynccontextmanager
async def editor(path: Path) -> AsyncIterator[Editor]:
    server = SocketServer(path, Endpoint(table()))
    await server.start()
    reader, writer = await asyncio.open_unix_connection(str(path))
    try:
        writer.write(INIT)
        await writer.drain()
        assert "result" in json.loads(await asyncio.wait_for(reader.readline(), 5))
        (conn,) = server.connections
        yield Editor(reader, writer, conn)
    finally:
        writer.close()
        await server.close()


def test_an_answered_ask_returns_the_clients_result(socket_path: Path) -> None:
    async def main() -> None:
        async with editor(socket_path) as ed:
            asked = asyncio.create_task(ed.conn.ask(READ, {"path": "/w/a.py"}, timeout=5))
            request = await ed.line()
            assert request["method"] == READ and request["params"] == {"path": "/w/a.py"}
            assert str(request["id"]).startswith("d") and ed.conn.asking
            await ed.say({"jsonrpc": "2.0", "id": request["id"], "result": {"content": "x"}})
            assert await asyncio.wait_for(asked, 5) == {"content": "x"}
            assert not ed.conn.asking
            await ed.next_is_pong()  # the response itself got no answer

    asyncio.run(main())


def test_an_error_answer_fails_the_ask(socket_path: Path) -> None:
    async def main() -> None:
        async with editor(socket_path) as ed:
            asked = asyncio.create_task(ed.conn.ask(READ, {"path": "/w/a.py"}, timeout=5))
            request = await ed.line()
            error = {"code": -32002, "message": "no such buffer"}
            await ed.say({"jsonrpc": "2.0", "id": request["id"], "error": error})
            with pytest.raises(AskFailed, match="no such buffer"):
                await asyncio.wait_for(asked, 5)
            await ed.next_is_pong()

    asyncio.run(main())


def test_an_ask_nobody_answers_fails_after_its_timeout(socket_path: Path) -> None:
    async def main() -> None:
        async with editor(socket_path) as ed:
            with pytest.raises(AskFailed, match="did not answer"):
                await ed.conn.ask(READ, {"path": "/w/a.py"}, timeout=0.2)
            assert not ed.conn.asking
            request = await ed.line()
            await ed.say({"jsonrpc": "2.0", "id": request["id"], "result": {"content": "late"}})
            await ed.next_is_pong()  # the late answer is dropped, not refused

    asyncio.run(main())


def test_a_pending_ask_fails_at_once_when_the_client_hangs_up(socket_path: Path) -> None:
    async def main() -> None:
        async with editor(socket_path) as ed:
            asked = asyncio.create_task(ed.conn.ask(READ, {"path": "/w/a.py"}, timeout=60))
            await ed.line()
            ed.writer.close()
            with pytest.raises(AskFailed, match="closed"):
                await asyncio.wait_for(asked, 5)  # long before its 60 s
            with pytest.raises(AskFailed, match="closed"):
                await ed.conn.ask(READ, {"path": "/w/a.py"}, timeout=60)

    asyncio.run(main())


def test_a_response_to_an_unknown_id_is_dropped_and_the_ask_still_waits(
    socket_path: Path,
) -> None:
    async def main() -> None:
        async with editor(socket_path) as ed:
            asked = asyncio.create_task(ed.conn.ask(READ, {"path": "/w/a.py"}, timeout=5))
            request = await ed.line()
            await ed.say({"jsonrpc": "2.0", "id": "d999", "result": {"content": "wrong"}})
            await ed.next_is_pong()
            assert not asked.done()
            await ed.say({"jsonrpc": "2.0", "id": request["id"], "result": {"content": "right"}})
            assert await asyncio.wait_for(asked, 5) == {"content": "right"}

    asyncio.run(main())


def test_responses_from_a_client_with_nothing_pending_get_no_reply(socket_path: Path) -> None:
    async def main() -> None:
        async with editor(socket_path) as ed:
            await ed.say({"jsonrpc": "2.0", "id": 5, "result": 1})
            await ed.say({"jsonrpc": "2.0", "id": "d1", "result": {"content": None}})
            await ed.say({"jsonrpc": "2.0", "id": None, "error": {"code": -1, "message": "x"}})
            await ed.next_is_pong()
            await ed.say({"id": 7})  # neither result nor error: still an invalid request
            assert (await ed.line())["error"]["code"] == -32600

    asyncio.run(main())
