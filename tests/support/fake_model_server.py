"""A fake OpenAI-compatible model server: real HTTP, real SSE bytes.

Tests script its answers in order. Each scripted `Reply` is rendered the way a
real server would: as `chat.completion.chunk` SSE events (content split into
several deltas, tool-call arguments split into fragments keyed by index, a
usage chunk, `data: [DONE]`) when the request asks to stream, or as one
`chat.completion` JSON body when it does not. A `Fault` answers with an HTTP
error, a cut stream or garbage instead, or with a 200 stream that fails
part-way: the first chunks of a `Reply`, then an `event: error`, an `{"error":
...}` chunk, or a dropped connection. Anything else with a `perform(handler,
released)` method acts for itself (tests/support/model_faults.py: a server that
stalls, a huge body); `released` is set when the server stops, so nothing it
holds outlives the test. Every request body is recorded. The daemon's
turn-close notes call is answered from `notes_script` (with no notes when it
is empty) and recorded in `notes_requests`, apart from the agent's calls
(tests/support/notes_requests.py). What the daemon asks about the context
window (`GET /props`, `/api/ps`, `/v1/models`, `POST /api/show`, ...) gets a
404, or, after `serve_window(kind, n_ctx)`, that server kind's answer
(tests/support/server_windows.py); those look-ups are recorded in `probes`.
"""

from __future__ import annotations

import json
import socket
import ssl
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from tests.support.notes_requests import is_notes_request
from tests.support.server_windows import ServerWindow, answer_get, answer_post, answers_post


@dataclass
class Reply:
    content: str = ""
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    prompt_tokens: int = 100
    completion_tokens: int = 20
    cached_tokens: int = 0
    delay: float = 0.0  # seconds to wait before answering (a slow model)


@dataclass
class Fault:
    status: int = 500
    body: str = '{"error": {"message": "scripted failure"}}'
    headers: dict[str, str] = field(default_factory=dict)
    cut_stream_after: str | None = None  # send this text as a delta, then drop the connection
    # A 200 stream that fails part-way: the first `after_chunks` chunks of `partial` (as
    # `stream_chunks` renders it), then `event: error` with `error_event` as its data, or an
    # `{"error": error_chunk}` chunk and `[DONE]`; with neither, the connection drops.
    partial: Reply | None = None
    after_chunks: int = 0
    error_event: str | None = None
    error_chunk: dict[str, Any] | None = None


class Act(Protocol):
    """A scripted answer that writes itself (see tests/support/model_faults.py)."""

    def perform(self, handler: BaseHTTPRequestHandler, released: threading.Event) -> None: ...


Scripted = Reply | Fault | Act
# The answer to a notes call nobody scripted: no notes, no tokens.
NO_NOTES = Reply(content="", prompt_tokens=0, completion_tokens=0)


class _QuietServer(ThreadingHTTPServer):
    """Says nothing when a client hangs up mid-answer, as clients of a failed stream do."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


def tool_call(name: str, **arguments: Any) -> tuple[str, dict[str, Any]]:
    return (name, arguments)


class FakeModelServer:
    """Serves the script over HTTP/1.1; over TLS (https) when given a server `tls` context.
    `connections` counts the connections accepted, to see whether clients reuse them."""

    def __init__(
        self, script: list[Scripted] | None = None, *, tls: ssl.SSLContext | None = None
    ) -> None:
        self.script: list[Scripted] = list(script or [])
        self.requests: list[dict[str, Any]] = []
        self.notes_script: list[Scripted] = []
        self.notes_requests: list[dict[str, Any]] = []
        self.connections = 0
        self.window: ServerWindow | None = None
        self.probes: list[str] = []
        self.released = threading.Event()
        self._lock = threading.Lock()
        self._httpd = _QuietServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._scheme = "http"
        if tls is not None:
            # The handshake happens in the connection's own thread, at its first read.
            self._httpd.socket = tls.wrap_socket(
                self._httpd.socket, server_side=True, do_handshake_on_connect=False
            )
            self._scheme = "https"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def endpoint(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"{self._scheme}://{host!s}:{port}/v1/chat/completions"

    def start(self) -> FakeModelServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.released.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def serve_window(self, kind: str, n_ctx: int, **details: Any) -> ServerWindow:
        """Answer the window look-ups as a `kind` server with `n_ctx` tokens does."""
        self.window = ServerWindow(kind, n_ctx, **details)
        return self.window

    def add(self, *items: Scripted) -> None:
        with self._lock:
            self.script.extend(items)

    def _next(self, payload: dict[str, Any]) -> Scripted:
        with self._lock:
            if is_notes_request(payload):
                self.notes_requests.append(payload)
                return self.notes_script.pop(0) if self.notes_script else NO_NOTES
            self.requests.append(payload)
            if not self.script:
                return Fault(500, '{"error": {"message": "fake server: script exhausted"}}')
            return self.script.pop(0)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                # As real servers do: no Nagle delay between the pieces of a stream
                # (on a reused connection it would meet the client's delayed ACK).
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                with server._lock:
                    server.connections += 1

            def do_GET(self) -> None:
                with server._lock:
                    server.probes.append(f"GET {self.path}")
                answer_get(self, server.window)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                if not body or len(body) < length:
                    # Cut off on its way (a daemon stopped mid-request): nobody waits for
                    # an answer, and it is no request to record.
                    self.close_connection = True
                    return
                payload = json.loads(body)
                if answers_post(self.path):
                    with server._lock:
                        server.probes.append(f"POST {self.path}")
                    answer_post(self, server.window, payload)
                    return
                item = server._next(payload)
                if isinstance(item, Reply) and item.delay:
                    time.sleep(item.delay)
                if not isinstance(item, Reply | Fault):
                    item.perform(self, server.released)
                elif isinstance(item, Fault):
                    _send_fault(self, item)
                elif payload.get("stream"):
                    _send_stream(self, item)
                else:
                    _send_json(self, 200, completion(item))

        return Handler


def _send_json(
    handler: BaseHTTPRequestHandler, status: int, body: Any, headers: dict[str, str] | None = None
) -> None:
    data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    for key, value in (headers or {}).items():
        handler.send_header(key, value)
    handler.end_headers()
    handler.wfile.write(data)


def _send_fault(handler: BaseHTTPRequestHandler, fault: Fault) -> None:
    if fault.partial is not None:
        _send_partial(handler, fault, fault.partial)
        return
    if fault.cut_stream_after is None:
        _send_json(handler, fault.status, fault.body, fault.headers)
        return
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Connection", "close")
    handler.end_headers()
    chunk = _chunk({"content": fault.cut_stream_after})
    handler.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
    handler.wfile.flush()
    handler.close_connection = True


def _send_partial(handler: BaseHTTPRequestHandler, fault: Fault, reply: Reply) -> None:
    start_stream(handler)
    for chunk in stream_chunks(reply)[: fault.after_chunks]:
        write_piece(handler, f"data: {json.dumps(chunk)}\n\n".encode())
    if fault.error_event is not None:
        write_piece(handler, f"event: error\ndata: {fault.error_event}\n\n".encode())
    elif fault.error_chunk is not None:
        write_piece(handler, f"data: {json.dumps({'error': fault.error_chunk})}\n\n".encode())
        write_piece(handler, b"data: [DONE]\n\n")
    else:
        handler.close_connection = True  # no last chunk: the body is cut
        return
    handler.wfile.write(b"0\r\n\r\n")
    handler.wfile.flush()


def start_stream(handler: BaseHTTPRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()


def write_piece(handler: BaseHTTPRequestHandler, data: bytes) -> None:
    """One piece of a chunked body, flushed at once."""
    handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
    handler.wfile.flush()


def _send_stream(handler: BaseHTTPRequestHandler, reply: Reply) -> None:
    start_stream(handler)
    for chunk in stream_chunks(reply):
        write_piece(handler, f"data: {json.dumps(chunk)}\n\n".encode())
    done = b"data: [DONE]\n\n"  # the last piece and the end of the body in one write
    handler.wfile.write(f"{len(done):x}\r\n".encode() + done + b"\r\n0\r\n\r\n")
    handler.wfile.flush()


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "model": "fake",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _usage(reply: Reply) -> dict[str, Any]:
    return {
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        "prompt_tokens_details": {"cached_tokens": reply.cached_tokens},
    }


def stream_chunks(reply: Reply) -> list[dict[str, Any]]:
    chunks = [_chunk({"role": "assistant", "content": ""})]
    text = reply.content
    for start in range(0, len(text), 7):
        chunks.append(_chunk({"content": text[start : start + 7]}))
    for index, (name, arguments) in enumerate(reply.tool_calls):
        encoded = json.dumps(arguments)
        first = {
            "index": index,
            "id": f"call_{index}",
            "type": "function",
            "function": {"name": name, "arguments": ""},
        }
        chunks.append(_chunk({"tool_calls": [first]}))
        for start in range(0, len(encoded), 11):
            piece = {"index": index, "function": {"arguments": encoded[start : start + 11]}}
            chunks.append(_chunk({"tool_calls": [piece]}))
    chunks.append(_chunk({}, "tool_calls" if reply.tool_calls else "stop"))
    chunks.append(
        {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "choices": [],
            "usage": _usage(reply),
        }
    )
    return chunks


def completion(reply: Reply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
            for i, (name, arguments) in enumerate(reply.tool_calls)
        ]
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }
        ],
        "usage": _usage(reply),
    }
