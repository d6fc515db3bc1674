"""A loopback HTTP proxy in front of a real model server that records each exchange.

The harness is pointed at the proxy, the proxy at the server; both listen on
127.0.0.1 only. Each POST is forwarded as it came, and the answer is passed
back piece by piece as it arrives (so a stream still streams), while the proxy
notes what the tests assert on and what the figures report: the status, whether
the request streamed and carried tools, the roles and `content` values of its
messages, the token usage the server reported, and how long it took.
The GETs (the daemon's look-ups of the window: `/api/ps`, `/props`,
`/v1/models`, ...) are kept apart, in `lookups`, so `exchanges` holds the
model requests alone.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length"}


@dataclass(kw_only=True, slots=True)
class Exchange:
    """One request through the proxy and what came back."""

    path: str
    body: dict[str, Any]
    status: int = 0
    seconds: float = 0.0
    answer: bytes = b""

    @property
    def streamed(self) -> bool:
        return bool(self.body.get("stream"))

    @property
    def with_tools(self) -> bool:
        return bool(self.body.get("tools"))

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    @property
    def usage(self) -> dict[str, int]:
        """The last `usage` object the server sent (whole JSON or any SSE event)."""
        found: dict[str, int] = {}
        text = self.answer.decode("utf-8", "replace")
        pieces = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
        for piece in pieces or [text]:
            try:
                usage = json.loads(piece).get("usage")
            except (ValueError, AttributeError):
                continue
            if isinstance(usage, dict):
                found = {k: v for k, v in usage.items() if isinstance(v, int)}
        return found


@dataclass(kw_only=True, slots=True)
class RecordingProxy:
    """Forwards 127.0.0.1:`port` to the server at 127.0.0.1:`upstream_port`."""

    upstream_port: int
    exchanges: list[Exchange] = field(default_factory=list)
    lookups: list[Exchange] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None

    @property
    def endpoint(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1/chat/completions"

    def start(self) -> RecordingProxy:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                proxy._forward(self)

            def do_GET(self) -> None:
                proxy._forward(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def take(self) -> list[Exchange]:
        """The exchanges so far, and a fresh record for the next test."""
        taken, self.exchanges = self.exchanges, []
        return taken

    def _forward(self, handler: BaseHTTPRequestHandler) -> None:
        raw = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        exchange = Exchange(path=handler.path, body=body if isinstance(body, dict) else {})
        (self.lookups if handler.command == "GET" else self.exchanges).append(exchange)
        started = time.monotonic()
        upstream = http.client.HTTPConnection("127.0.0.1", self.upstream_port, timeout=600)
        try:
            headers = {k: v for k, v in handler.headers.items() if k.lower() not in HOP_BY_HOP}
            upstream.request(handler.command, handler.path, body=raw, headers=headers)
            answer = upstream.getresponse()
            exchange.status = answer.status
            self._relay(handler, answer, exchange)
        except (OSError, http.client.HTTPException):
            # The server or the harness dropped the connection: the harness sees it dropped.
            handler.close_connection = True
        finally:
            upstream.close()
            exchange.seconds = time.monotonic() - started

    @staticmethod
    def _relay(
        handler: BaseHTTPRequestHandler, answer: http.client.HTTPResponse, exchange: Exchange
    ) -> None:
        handler.send_response(answer.status)
        for key, value in answer.getheaders():
            if key.lower() not in HOP_BY_HOP:
                handler.send_header(key, value)
        handler.send_header("Transfer-Encoding", "chunked")
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.close_connection = True
        while piece := answer.read1(65536):
            exchange.answer += piece
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            handler.wfile.flush()
        handler.wfile.write(b"0\r\n\r\n")
        handler.wfile.flush()
