"""A small synchronous JSON-RPC client for the daemon's Unix socket.

Used by every `harness` command. Responses are matched by id; notifications
that arrive meanwhile are queued for `next_notification`. Standard library
only, so importing it costs almost nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import time
from collections import deque
from pathlib import Path
from typing import Any

from . import errors, methods
from .framing import MAX_MESSAGE_BYTES, LineDecoder, Oversized, encode
from .version import PROTOCOL_VERSION


class DaemonUnreachable(Exception):
    """No daemon answers on the socket (absent, refused, or gone mid-call)."""


class ProtocolViolation(DaemonUnreachable):
    """The daemon sent something that is not JSON-RPC."""


class Connection:
    def __init__(self, sock: socket.socket, path: Path) -> None:
        self._sock = sock
        self.path = path
        self._decoder = LineDecoder(MAX_MESSAGE_BYTES)
        self._inbox: deque[dict[str, Any]] = deque()
        self._responses: dict[int, dict[str, Any]] = {}
        self._next_id = 1
        self.server_info: dict[str, Any] = {}

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

    def initialize(
        self, name: str, version: str, *, approvals: bool = True, notices: bool = False
    ) -> dict[str, Any]:
        """`notices`: this client shows the daemon's one-time notices (result["notice"])."""
        params = {
            "client": {"name": name, "version": version, "pid": os.getpid()},
            "protocol": PROTOCOL_VERSION,
            "capabilities": {"approvals": approvals, "stream": True, "notices": notices},
        }
        self.server_info = self.request(methods.INITIALIZE, params)
        return self.server_info

    # -- calls -----------------------------------------------------------
    def send_request(self, method: str, params: dict[str, Any] | None = None) -> int:
        request_id = self._next_id
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "id": request_id}
        if params is not None:
            message["params"] = params
        self._send(message)
        return request_id

    def request(
        self, method: str, params: dict[str, Any] | None = None, timeout: float | None = 30.0
    ) -> Any:
        return self.response(self.send_request(method, params), timeout, method)

    def response(self, request_id: int, timeout: float | None = 30.0, what: str = "") -> Any:
        """The result of a request sent with `send_request`, or its error raised."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while request_id not in self._responses:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                name = what or f"request {request_id}"
                raise DaemonUnreachable(f"daemon did not answer {name} within {timeout:.0f} s")
            self._read_once(remaining)
        response = self._responses.pop(request_id)
        if "error" in response:
            raise errors.from_wire(response["error"])
        return response.get("result")

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
        try:
            self._sock.sendall(encode(message))
        except OSError as exc:
            raise DaemonUnreachable(f"daemon connection lost ({exc.strerror or exc})") from exc

    def _read_once(self, timeout: float | None) -> None:
        ready, _, _ = select.select([self._sock], [], [], timeout)
        if not ready:
            return
        try:
            data = self._sock.recv(65536)
        except OSError as exc:
            raise DaemonUnreachable(f"daemon connection lost ({exc.strerror or exc})") from exc
        if not data:
            raise DaemonUnreachable("daemon connection lost")
        for line in self._decoder.feed(data):
            if isinstance(line, Oversized):
                raise ProtocolViolation("protocol error from daemon: message too large")
            self._accept(line)

    def _accept(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError as exc:
            raise ProtocolViolation("protocol error from daemon: invalid JSON") from exc
        for item in message if isinstance(message, list) else [message]:
            if not isinstance(item, dict):
                raise ProtocolViolation("protocol error from daemon: not a JSON-RPC object")
            if "method" in item:
                self._inbox.append(item)
            elif isinstance(item.get("id"), int):
                self._responses[item["id"]] = item


def connect(path: Path, timeout: float = 5.0) -> Connection:
    """Open a connection, or raise DaemonUnreachable naming why."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(os.fspath(path))
    except FileNotFoundError as exc:
        sock.close()
        raise DaemonUnreachable(f"no daemon socket at {path}") from exc
    except ConnectionRefusedError as exc:
        sock.close()
        raise DaemonUnreachable(f"nothing listens on {path} (stale socket)") from exc
    except OSError as exc:
        sock.close()
        raise DaemonUnreachable(f"cannot connect to {path}: {exc.strerror or exc}") from exc
    sock.settimeout(None)
    return Connection(sock, path)
