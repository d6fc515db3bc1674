"""One JSON-RPC 2.0 peer over a pair of asyncio streams, one message a line.

Both links of the bridge use it: the editor's standard input and output, and the
daemon's socket. Either side may send requests and notifications. Incoming
requests and notifications go to a `Dispatch` callback, each request in its own
task, so a slow handler (a prompt that lasts minutes) never blocks the reader; a
request is answered by the callback's return value or by the `RpcFailure` it
raises.
`cancel_outgoing` withdraws a request this side sent (ACP's `$/cancel_request`);
an incoming `$/cancel_request` cancels the handler task of that request, which
is then answered with -32800. Notifications are handled one at a time in the
order they came (the daemon's events must reach the editor in order), apart
from the requests, which each run at once. Writes go through one lock, so lines never mix.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from coding_harness.protocol.framing import MAX_MESSAGE_BYTES, LineDecoder, Oversized, encode

log = logging.getLogger(__name__)

CANCEL_REQUEST = "$/cancel_request"
REQUEST_CANCELLED = -32800
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
READ_CHUNK = 1 << 16

Dispatch = Callable[[str, Any, bool], Awaitable[Any]]
# The id of a too-long message, when it comes before its params (as every SDK writes it).
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')


def _request_id(head: bytes) -> int | str | None:
    """The id a too-long message's first bytes name, so its answer reaches the caller."""
    found = _ID.search(head)
    params = head.find(b'"params"')
    if found is None or (0 <= params < found.start()):
        return None
    try:
        value = json.loads(found.group(1))
    except ValueError:
        return None
    return value if isinstance(value, (int, str)) else None


class RpcFailure(Exception):
    """A JSON-RPC error: raised by a handler to answer with it, or by `request`
    when the other side answered with one."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_wire(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class ThenAnswer:
    """A handler's result with work to do once the answer is written (ACP wants a
    session's updates only after the answer that created it)."""

    def __init__(self, result: Any, follow_up: Callable[[], Awaitable[None]]) -> None:
        self.result = result
        self.follow_up = follow_up


class PeerClosed(ConnectionError):
    """The other side went away (or this side closed) before an answer came."""


class Peer:
    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        dispatch: Dispatch,
        *,
        name: str,
        id_prefix: str = "",
    ) -> None:
        self.name = name
        self._reader = reader
        self._writer = writer
        self._dispatch = dispatch
        self._ids = itertools.count(1)
        self._prefix = id_prefix
        self._pending: dict[int | str, asyncio.Future[Any]] = {}
        self._handling: dict[int | str, asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._write_lock = asyncio.Lock()
        self.closed = asyncio.Event()  # nothing more can be sent
        self.ended = asyncio.Event()  # nothing more will arrive
        self.reader_task: asyncio.Task[None] | None = None
        # Notifications are handled one at a time, in the order they came.
        self._notes: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self._note_worker: asyncio.Task[None] | None = None

    def start(self) -> Peer:
        """Start reading in the background."""
        self.reader_task = asyncio.create_task(self.run(), name=f"{self.name}-reader")
        return self

    # -- sending ---------------------------------------------------------
    async def send(self, message: dict[str, Any]) -> None:
        data = encode(message)
        async with self._write_lock:
            if self.closed.is_set():
                raise PeerClosed(f"{self.name} is closed")
            self._writer.write(data)
            try:
                await self._writer.drain()
            except (ConnectionError, OSError) as exc:
                self._lost(exc)
                raise PeerClosed(f"{self.name} went away: {exc}") from exc

    async def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)

    def start_request(
        self, method: str, params: Any = None
    ) -> tuple[int | str, asyncio.Future[Any]]:
        """Send a request in the background; its id and the future of its result."""
        number = next(self._ids)
        request_id: int | str = f"{self._prefix}{number}" if self._prefix else number
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self._spawn(self._send_or_fail(message, future))
        return request_id, future

    async def request(self, method: str, params: Any = None, timeout: float | None = None) -> Any:  # noqa: ASYNC109
        request_id, future = self.start_request(method, params)
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout)
        finally:
            if not future.done():
                self._pending.pop(request_id, None)
                future.cancel()

    async def cancel_outgoing(self, request_id: int | str) -> None:
        """Withdraw a request this side sent: `$/cancel_request`, and forget its answer."""
        future = self._pending.pop(request_id, None)
        if future is not None and not future.done():
            future.cancel()
        with contextlib.suppress(PeerClosed):
            await self.notify(CANCEL_REQUEST, {"requestId": request_id})

    async def _send_or_fail(self, message: dict[str, Any], future: asyncio.Future[Any]) -> None:
        failure: Exception
        try:
            await self.send(message)
            return
        except PeerClosed as exc:
            failure = exc
        except ValueError as exc:  # not encodable (a lone surrogate): fail now, not at a timeout
            failure = RpcFailure(INVALID_PARAMS, f"cannot send {message.get('method')}: {exc}")
        self._pending.pop(message["id"], None)
        if not future.done():
            future.set_exception(failure)

    # -- receiving -------------------------------------------------------
    async def run(self) -> None:
        """Read until the other side closes; then fail what still waits for it."""
        decoder = LineDecoder(MAX_MESSAGE_BYTES)
        if self._note_worker is None:
            self._note_worker = self._spawn(self._handle_notifications())
        try:
            while True:
                data = await self._reader.read(READ_CHUNK)
                if not data:
                    break
                for line in decoder.feed(data):
                    await self._receive(line)
        except (ConnectionError, OSError) as exc:
            log.debug("%s: %s", self.name, exc)
        finally:
            self.ended.set()
            self._fail_pending(PeerClosed(f"{self.name} went away"))

    async def _receive(self, line: bytes | Oversized) -> None:
        if isinstance(line, Oversized):
            await self._answer_error(
                _request_id(line.head),
                INVALID_REQUEST,
                f"message of over {MAX_MESSAGE_BYTES} bytes refused (the limit is "
                f"{MAX_MESSAGE_BYTES >> 20} MiB); send less, or attach large files by path",
            )
            return
        try:
            message = json.loads(line)
        except ValueError:
            await self._answer_error(None, PARSE_ERROR, "not valid JSON")
            return
        if not isinstance(message, dict):
            await self._answer_error(None, INVALID_REQUEST, "a message must be a JSON object")
            return
        method = message.get("method")
        if isinstance(method, str):
            self._incoming(method, message)
        elif "id" in message and ("result" in message or "error" in message):
            self._answered(message)
        else:
            await self._answer_error(
                message.get("id"), INVALID_REQUEST, "neither request nor answer"
            )

    def _incoming(self, method: str, message: dict[str, Any]) -> None:
        params = message.get("params")
        if "id" not in message:
            if method == CANCEL_REQUEST:
                self._cancel_handling(params)
                return
            self._notes.put_nowait((method, params))
            return
        request_id = message["id"]
        if not isinstance(request_id, (int, str)) or isinstance(request_id, bool):
            self._spawn(self._answer_error(None, INVALID_REQUEST, "bad request id"))
            return
        task = self._spawn(self._handle(request_id, method, params))
        self._handling[request_id] = task

    def _answered(self, message: dict[str, Any]) -> None:
        future = self._pending.pop(message["id"], None)
        if future is None or future.done():
            log.debug("%s: an answer to no pending request (%r)", self.name, message["id"])
            return
        error = message.get("error")
        if error is not None:
            code = error.get("code", INTERNAL_ERROR) if isinstance(error, dict) else INTERNAL_ERROR
            text = error.get("message", "error") if isinstance(error, dict) else str(error)
            data = error.get("data") if isinstance(error, dict) else None
            future.set_exception(RpcFailure(int(code), str(text), data))
        else:
            future.set_result(message.get("result"))

    def _cancel_handling(self, params: Any) -> None:
        request_id = params.get("requestId") if isinstance(params, dict) else None
        task = self._handling.get(request_id) if isinstance(request_id, (int, str)) else None
        if task is not None:
            task.cancel()

    async def _handle(self, request_id: int | str, method: str, params: Any) -> None:
        answer: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        follow_up: Callable[[], Awaitable[None]] | None = None
        try:
            result = await self._dispatch(method, params, False)
            if isinstance(result, ThenAnswer):
                result, follow_up = result.result, result.follow_up
            answer["result"] = result
        except RpcFailure as failure:
            answer["error"] = failure.to_wire()
        except asyncio.CancelledError:
            answer["error"] = {"code": REQUEST_CANCELLED, "message": "request cancelled"}
        except Exception as exc:  # a bug in a handler: the caller still gets an answer
            log.exception("%s: %s failed", self.name, method)
            answer["error"] = {"code": INTERNAL_ERROR, "message": f"internal error: {exc}"}
        finally:
            self._handling.pop(request_id, None)
        with contextlib.suppress(PeerClosed):
            await self.send(answer)
            if follow_up is not None:
                await follow_up()

    async def notifications_handled(self) -> None:
        """Wait until every notification received so far has been handled."""
        await self._notes.join()

    async def _handle_notifications(self) -> None:
        while True:
            method, params = await self._notes.get()
            try:
                await self._notification(method, params)
            finally:
                self._notes.task_done()

    async def _notification(self, method: str, params: Any) -> None:
        try:
            await self._dispatch(method, params, True)
        except RpcFailure as failure:
            log.info("%s: notification %s refused: %s", self.name, method, failure.message)
        except Exception:
            log.exception("%s: notification %s failed", self.name, method)

    async def _answer_error(self, request_id: Any, code: int, message: str) -> None:
        answer = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
        with contextlib.suppress(PeerClosed):
            await self.send(answer)

    # -- life ------------------------------------------------------------
    def _spawn(self, work: Awaitable[None]) -> asyncio.Task[None]:
        task: asyncio.Task[None] = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _lost(self, exc: BaseException | None) -> None:
        """Nothing more can be written: fail what waits for an answer."""
        if self.closed.is_set():
            return
        self.closed.set()
        self._fail_pending(PeerClosed(f"{self.name} went away" + (f": {exc}" if exc else "")))

    def _fail_pending(self, reason: PeerClosed) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(reason)
        self._pending.clear()

    async def finish_handling(self, grace: float) -> None:
        """Give the requests still being handled up to `grace` seconds to answer."""
        handling = list(self._handling.values())
        if handling:
            await asyncio.wait(handling, timeout=grace)

    async def close(self) -> None:
        self._lost(None)
        for task in list(self._tasks):
            task.cancel()
        with contextlib.suppress(Exception):
            self._writer.close()
            await self._writer.wait_closed()
