"""A small synchronous JSON-RPC client for the daemon's Unix socket.

Used by every `harness` command. Responses are matched by id; notifications
that arrive meanwhile are queued for `next_notification`. A request the
daemon refuses as overloaded (-32016) is sent again after a backoff with
full jitter, reading meanwhile; a daemon that refuses the connection itself
(-32015, too many connections) is reported with its own words. Standard
library only, so importing it costs almost nothing: the socket comes from
`protocol.dial`, which takes it from `_socket`.

`initialize` can carry a `session` (`{cwd, provider?, model?, env?}` to create
one, `{id}` to join one), so a one-shot reaches its session in one round trip.
"""

from __future__ import annotations

import _socket
import contextlib
import os
import time
from collections import deque
from pathlib import Path

from coding_harness.protocol import errors, json_text, methods
from coding_harness.protocol.dial import DaemonUnreachable as DaemonUnreachable  # re-exported
from coding_harness.protocol.dial import dial
from coding_harness.protocol.framing import MAX_MESSAGE_BYTES, LineDecoder, Oversized, encode
from coding_harness.protocol.version import PROTOCOL_VERSION

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class ProtocolViolation(DaemonUnreachable):
    """The daemon sent something that is not JSON-RPC."""


class DaemonRefused(DaemonUnreachable):
    """The daemon turned the connection away (too many connections), in its own words."""


# Retries of a request the daemon refused as overloaded: the first wait is up to
# RETRY_BASE seconds, doubling up to RETRY_CAP, for at most RETRY_ATTEMPTS sends.
RETRY_BASE = 0.05
RETRY_CAP = 2.0
RETRY_ATTEMPTS = 10


def retry_delay(attempt: int, hint: float = 0.0) -> float:
    """Seconds to wait before retry `attempt` (1, 2, ...): the daemon's `retry_after` hint
    (at most RETRY_CAP), plus full jitter over an exponential bound."""
    import random  # only when the daemon is overloaded

    bound = min(RETRY_CAP, RETRY_BASE * 2 ** (attempt - 1))
    return min(RETRY_CAP, max(0.0, hint)) + random.uniform(0, bound)


class Connection:
    def __init__(self, sock: _socket.socket, path: Path) -> None:
        self._sock = sock
        self.path = path
        self._decoder = LineDecoder(MAX_MESSAGE_BYTES)
        self._inbox: deque[dict[str, Any]] = deque()
        self._responses: dict[int, dict[str, Any]] = {}
        self._sent: dict[int, tuple[str, dict[str, Any] | None]] = {}
        self._next_id = 1
        self.server_info: dict[str, Any] = {}
        # Why the connection failed, once it has; an error the daemon sent with no id.
        self.broken: DaemonUnreachable | None = None
        self._last_word = ""

    # -- lifecycle -------------------------------------------------------
    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def fileno(self) -> int:
        return self._sock.fileno()

    def take_over(self, other: Connection) -> None:
        """Carry on over `other`, a new connection to the daemon (this one was lost: the
        daemon restarted), with what it has read and its `server_info`. This
        connection's old socket is closed; request ids go on from the higher count."""
        self.close()
        self._sock, self.path = other._sock, other.path
        self._decoder, self._inbox = other._decoder, other._inbox
        self._responses, self._sent = other._responses, other._sent
        self._next_id = max(self._next_id, other._next_id)
        self.server_info, self.broken, self._last_word = other.server_info, None, ""

    def initialize(
        self,
        name: str,
        version: str,
        *,
        approvals: bool = True,
        notices: bool = False,
        session: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """`notices`: this client shows the daemon's one-time notices (result["notice"]).
        `session`: create (`{cwd, ...}`) or join (`{id}`) a session in the same request,
        attached to this connection; its summary comes back as result["session"]."""
        sent = self.send_initialize(
            name, version, approvals=approvals, notices=notices, session=session
        )
        return self.initialized(sent)

    def send_initialize(
        self,
        name: str,
        version: str,
        *,
        approvals: bool = True,
        notices: bool = False,
        session: dict[str, Any] | None = None,
    ) -> int:
        """Send `initialize` (as `initialize` does) without waiting; `initialized(id)`
        waits for the answer, so the client can get on with something meanwhile."""
        params: dict[str, Any] = {
            "client": {"name": name, "version": version, "pid": os.getpid()},
            "protocol": PROTOCOL_VERSION,
            "capabilities": {"approvals": approvals, "stream": True, "notices": notices},
        }
        if session is not None:
            params["session"] = session
        return self.send_request(methods.INITIALIZE, params)

    def initialized(self, request_id: int) -> dict[str, Any]:
        """The answer to `send_initialize` (kept as `server_info`), or its error raised."""
        self.server_info = self.response(request_id, what=methods.INITIALIZE)
        return self.server_info

    # -- calls -----------------------------------------------------------
    def send_request(self, method: str, params: dict[str, Any] | None = None) -> int:
        request_id = self._next_id
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "id": request_id}
        if params is not None:
            message["params"] = params
        self._send(message)
        self._sent[request_id] = (method, params)
        return request_id

    def request(
        self, method: str, params: dict[str, Any] | None = None, timeout: float | None = 30.0
    ) -> Any:
        return self.response(self.send_request(method, params), timeout, method)

    def response(self, request_id: int, timeout: float | None = 30.0, what: str = "") -> Any:
        """The result of a request sent with `send_request`, or its error raised.

        While the daemon answers "overloaded", the request is sent again (with a new
        id) after a jittered backoff; the time spent waiting counts in `timeout`.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        late = (
            f"daemon did not answer {what or f'request {request_id}'} within {timeout or 0:.0f} s"
        )
        attempt = 1
        while True:
            response = self._await(request_id, deadline, late)
            sent = self._sent.pop(request_id, None)
            if "error" not in response:
                return response.get("result")
            exc = errors.from_wire(response["error"])
            if not isinstance(exc, errors.ServerOverloaded) or sent is None:
                raise exc
            if attempt >= RETRY_ATTEMPTS:
                raise exc
            hint = exc.data.get("retry_after") if isinstance(exc.data, dict) else None
            self._pause(retry_delay(attempt, float(hint or 0.0)), deadline)
            request_id = self.send_request(*sent)
            attempt += 1

    def _await(self, request_id: int, deadline: float | None, late: str) -> dict[str, Any]:
        while request_id not in self._responses:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise DaemonUnreachable(late)
            self._read_once(remaining)
        return self._responses.pop(request_id)

    def _pause(self, seconds: float, deadline: float | None) -> None:
        """Wait `seconds` (not past `deadline`), reading what the daemon sends meanwhile."""
        end = time.monotonic() + seconds
        if deadline is not None:
            end = min(end, deadline)
        while (remaining := end - time.monotonic()) > 0:
            self._read_once(remaining)

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    def next_notification(self, timeout: float | None = None) -> dict[str, Any] | None:
        """The next notification, or None when `timeout` passes first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._inbox:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return None
            self._read_once(remaining)
        return self._inbox.popleft()

    def has_buffered(self) -> bool:
        return bool(self._inbox)

    # -- plumbing --------------------------------------------------------
    def _send(self, message: dict[str, Any]) -> None:
        data = encode(message)
        if len(data) > MAX_MESSAGE_BYTES:
            raise errors.MessageTooLarge(
                f"the request is {len(data):,} bytes, over the daemon's "
                f"{MAX_MESSAGE_BYTES:,}-byte limit; send less at once"
            )
        if self.broken is not None:
            raise self.broken
        try:
            self._sock.sendall(data)
        except OSError as exc:
            self._hear_last_words()
            why = f"daemon connection lost ({exc.strerror or exc}){self._last_word}"
            raise self._fail(why) from exc

    def _hear_last_words(self) -> None:
        """What the daemon wrote before it closed (a refusal), raised if it says so."""
        with contextlib.suppress(OSError, DaemonUnreachable):  # BlockingIOError: all read
            while data := self._recv(0.0):
                for line in self._decoder.feed(data):
                    if not isinstance(line, Oversized):
                        self._accept(line)
        if isinstance(self.broken, DaemonRefused):
            raise self.broken

    def _read_once(self, timeout: float | None) -> None:
        if self.broken is not None:
            raise self.broken
        try:
            data = self._recv(timeout)
        except TimeoutError:
            return
        except OSError as exc:
            why = f"daemon connection lost ({exc.strerror or exc}){self._last_word}"
            raise self._fail(why) from exc
        if not data:
            raise self._fail("daemon connection lost" + self._last_word)
        for line in self._decoder.feed(data):
            if isinstance(line, Oversized):
                raise self._fail("protocol error from daemon: message too large", violation=True)
            self._accept(line)

    def _recv(self, timeout: float | None) -> bytes:
        """What the daemon sent, waiting at most `timeout` seconds (TimeoutError; with 0,
        BlockingIOError when nothing waits). The socket is blocking again afterwards, so
        a later `sendall` never times out. (A timeout rather than `select`, whose import
        a one-shot would pay.)"""
        self._sock.settimeout(timeout)
        try:
            return self._sock.recv(65536)
        finally:
            self._sock.settimeout(None)

    def _fail(self, why: str, *, violation: bool = False) -> DaemonUnreachable:
        """Record (and return, to raise) why this connection can no longer be used."""
        self.broken = (ProtocolViolation if violation else DaemonUnreachable)(why)
        return self.broken

    def _accept(self, line: bytes) -> None:
        try:
            message = json_text.loads(line)
        except ValueError as exc:
            raise self._fail("protocol error from daemon: invalid JSON", violation=True) from exc
        for item in message if isinstance(message, list) else [message]:
            if not isinstance(item, dict):
                raise self._fail(
                    "protocol error from daemon: not a JSON-RPC object", violation=True
                )
            if "method" in item:
                self._inbox.append(item)
            elif isinstance(item.get("id"), int):
                self._responses[item["id"]] = item
            elif item.get("id") is None and isinstance(item.get("error"), dict):
                self._unaddressed(item["error"])

    def _unaddressed(self, error: dict[str, Any]) -> None:
        """An error with no id: a refused connection, or a last word before closing."""
        exc = errors.from_wire(error)
        if isinstance(exc, errors.ServerBusy):
            self.broken = DaemonRefused(f"the daemon refused the connection: {exc.message}")
            raise self.broken
        self._last_word = f" ({exc.message})"


def connect(path: Path, timeout: float = 5.0) -> Connection:
    """Open a connection, or raise DaemonUnreachable naming why."""
    return Connection(dial(path, timeout), path)
