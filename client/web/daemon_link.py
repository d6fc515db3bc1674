"""One asyncio connection from the web bridge to the daemon's socket.

The bridge is a client of the daemon like any terminal: it reaches the daemon the
way every `harness` command does (the launcher starts one when none answers, run
in a thread since it polls), sends `initialize` and then JSON-RPC requests, one
message a line. Events the daemon sends go to the `on_event` callback in the
order they came. When the socket closes, `ended` is set and every request still
waiting fails with `DaemonUnreachable`; whoever owns the link dials a new one.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from coding_harness.protocol import errors, methods, paths
from coding_harness.protocol.client import DaemonUnreachable
from coding_harness.protocol.framing import MAX_MESSAGE_BYTES, encode
from coding_harness.protocol.version import PROTOCOL_VERSION, __version__

CLIENT_NAME = "harness-web"
REQUEST_TIMEOUT = 60.0
OnEvent = Callable[[dict[str, Any]], None]


def _start_daemon(socket: Path) -> None:
    """Block until a daemon answers on the socket, starting one if none does."""
    from coding_harness.client.session.launcher import connect_or_start

    connect_or_start(socket).close()


class DaemonLink:
    """An initialized connection; `request` sends, events go to `on_event`."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader, self._writer = reader, writer
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self.on_event: OnEvent | None = None
        self.ended = asyncio.Event()
        self.client_id = ""
        self._task = asyncio.create_task(self._read(), name="web-daemon-reader")

    @classmethod
    async def open(cls, *, approvals: bool, on_event: OnEvent | None = None) -> DaemonLink:
        """A new link, the daemon started first if none answers; DaemonUnreachable if none can."""
        socket = paths.socket_path()
        try:
            await asyncio.to_thread(_start_daemon, socket)
            reader, writer = await asyncio.open_unix_connection(
                str(socket), limit=MAX_MESSAGE_BYTES + 1024
            )
        except OSError as exc:
            raise DaemonUnreachable(f"cannot reach the coding-harness daemon: {exc}") from exc
        link = cls(reader, writer)
        link.on_event = on_event
        client = {"name": CLIENT_NAME, "version": __version__, "pid": os.getpid()}
        capabilities = {"approvals": approvals, "stream": True}
        try:
            answer = await link.request(
                methods.INITIALIZE,
                {"protocol": PROTOCOL_VERSION, "client": client, "capabilities": capabilities},
            )
        except errors.RpcError as exc:
            await link.close()
            raise DaemonUnreachable(f"the daemon refused the web bridge: {exc}") from exc
        link.client_id = str(answer.get("client_id") or "")
        return link

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """The result, or the daemon's error raised as its `RpcError`."""
        if self.ended.is_set():
            raise DaemonUnreachable("the connection to the daemon is closed")
        number = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[number] = future
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": number, "method": method}
        if params is not None:
            message["params"] = params
        try:
            self._writer.write(encode(message))
            await self._writer.drain()
            return await asyncio.wait_for(future, REQUEST_TIMEOUT)
        except (ConnectionError, OSError) as exc:
            raise DaemonUnreachable(f"the daemon went away: {exc}") from exc
        except TimeoutError:
            raise DaemonUnreachable(f"the daemon did not answer {method} in time") from None
        finally:
            self._waiting.pop(number, None)

    async def close(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._task
        self._writer.close()
        with contextlib.suppress(Exception):
            await self._writer.wait_closed()
        self._end()

    async def _read(self) -> None:
        try:
            while True:
                line = await self._reader.readline()
                if not line:
                    return
                self._handle(json.loads(line))
        except (ConnectionError, OSError, ValueError, asyncio.LimitOverrunError):
            return
        finally:
            self._end()

    def _handle(self, message: Any) -> None:
        if not isinstance(message, dict):
            return
        if message.get("method") == methods.EVENT:
            params = message.get("params")
            if isinstance(params, dict) and self.on_event is not None:
                self.on_event(params)
            return
        future = self._waiting.get(message.get("id"))  # type: ignore[arg-type]
        if future is None or future.done():
            return
        if "error" in message:
            future.set_exception(errors.from_wire(message["error"]))
        else:
            future.set_result(message.get("result"))

    def _end(self) -> None:
        self.ended.set()
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(DaemonUnreachable("the daemon closed the connection"))
