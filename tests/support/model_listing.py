"""What first-run discovery meets on loopback ports: a model server that lists its
models (`GET /v1/models`), a port that accepts and never answers, and one that
answers garbage.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.fake_model_server import FakeModelServer, Scripted, _send_json

PROBE_PORTS = "CODING_HARNESS_PROBE_PORTS"


class ListingModelServer(FakeModelServer):
    """The fake model server, also answering `GET /v1/models` with `models`."""

    def __init__(self, models: list[str], script: list[Scripted] | None = None) -> None:
        self.models = models
        super().__init__(script)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        base = super()._handler_class()
        listing = self

        class Handler(base):  # type: ignore[misc, valid-type]
            def do_GET(self) -> None:
                if self.path.rstrip("/") != "/v1/models":
                    _send_json(self, 404, {"error": {"message": "not found"}})
                    return
                data = [{"id": m, "object": "model"} for m in listing.models]
                _send_json(self, 200, {"object": "list", "data": data})

        return Handler


class SilentPort:
    """A listening loopback port whose connections are accepted by the kernel and
    never answered (the backlog is never read)."""

    def __init__(self) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self.port = int(self._sock.getsockname()[1])

    def close(self) -> None:
        self._sock.close()


class GarbagePort:
    """A loopback port that answers every connection with `reply` and closes it."""

    def __init__(self, reply: bytes) -> None:
        self.reply = reply
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._sock.settimeout(0.1)
        self.port = int(self._sock.getsockname()[1])
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            with conn, contextlib.suppress(OSError):
                conn.settimeout(1.0)
                conn.recv(4096)
                conn.sendall(self.reply)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._sock.close()


def probe_ports(**ports: int) -> str:
    """The value of CODING_HARNESS_PROBE_PORTS naming `ports` in order."""
    return ",".join(f"{name}={port}" for name, port in ports.items()) or "none"


def without_keys(env: dict[str, str], keys: Any) -> dict[str, str]:
    """`env` without the variables named in `keys`."""
    return {k: v for k, v in env.items() if k not in set(keys)}
