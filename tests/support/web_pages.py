"""Helpers for the tests that touch HTTP (no tests of their own).

`forbid_remote_network` makes any connection or name lookup that would leave
the machine fail loudly, so a test that forgot to inject a transport cannot
reach the internet. `LocalSite` is a small threaded http.server on 127.0.0.1
serving canned routes.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

_LOCAL_NAMES = {"localhost", "127.0.0.1", "::1", "ip6-localhost"}


class RemoteNetworkUsed(AssertionError):
    """A test tried to reach beyond the loopback interface."""


def _is_loopback(host: object) -> bool:
    if not isinstance(host, str):
        return False
    if host in _LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def _is_numeric(host: object) -> bool:
    """An address written out (any form inet_aton takes): looking it up asks no server."""
    if not isinstance(host, str):
        return False
    try:
        ipaddress.ip_address(host)
    except ValueError:
        try:
            socket.inet_aton(host)
        except OSError:
            return False
    return True


def forbid_remote_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any connect or lookup that is not loopback or a Unix socket."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def check(sock: socket.socket, address: Any) -> None:
        if sock.family != socket.AF_UNIX and not _is_loopback(address[0]):
            raise RemoteNetworkUsed(f"test tried to connect to {address!r}")

    def connect(sock: socket.socket, address: Any) -> None:
        check(sock, address)
        real_connect(sock, address)

    def connect_ex(sock: socket.socket, address: Any) -> int:
        check(sock, address)
        return real_connect_ex(sock, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host is not None and not (_is_loopback(host) or _is_numeric(host)):
            raise RemoteNetworkUsed(f"test tried to resolve {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


Route = Callable[[BaseHTTPRequestHandler], None]


def send(
    handler: BaseHTTPRequestHandler,
    status: int,
    body: bytes = b"",
    content_type: str | None = "text/plain; charset=utf-8",
    headers: dict[str, str] | None = None,
) -> None:
    handler.send_response(status)
    if content_type is not None:
        handler.send_header("Content-Type", content_type)
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def trickle(handler: BaseHTTPRequestHandler, seconds: float) -> None:
    """Headers, then one byte every 0.1 s for `seconds` (a very slow server)."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/plain")
    handler.end_headers()
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            handler.wfile.write(b"x")
            handler.wfile.flush()
            time.sleep(0.1)
    except OSError:
        pass  # the client gave up, as it should


@contextmanager
def local_site(routes: dict[str, Route]) -> Iterator[str]:
    """Serve `routes` (path -> handler) on 127.0.0.1; yields the base URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            route = routes.get(self.path.split("?", 1)[0])
            if route is None:
                send(self, 404, b"no such page")
            else:
                route(self)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
