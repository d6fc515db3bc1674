"""Misbehaviours of the fake model server beyond `Fault`: stalls and huge bodies.

Each is scripted like a `Reply` (`FakeModelServer.add(Stall())`) and writes
its own answer:

- `Stall()`: accepts the request and sends nothing at all;
  `Stall(headers=True)` sends the 200 headers of an event stream, then nothing;
  `Stall(partial=Reply(...), after_chunks=N)` streams the first N chunks, then
  nothing. Each holds the connection until the server stops (or `hold` s).
- `Huge(size=...)`: a body of `size` bytes, `head` then filler, written in
  64 KiB pieces with its Content-Length (or chunked, `declare=False`);
  `sent` counts the bytes the client took before it hung up.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler

from tests.support.fake_model_server import Reply, start_stream, stream_chunks, write_piece

PIECE = 64 * 1024


@dataclass
class Stall:
    headers: bool = False
    partial: Reply | None = None
    after_chunks: int = 0
    hold: float = 60.0  # seconds at most; the server's stop ends it sooner

    def perform(self, handler: BaseHTTPRequestHandler, released: threading.Event) -> None:
        if self.headers or self.partial is not None:
            start_stream(handler)
        if self.partial is not None:
            for chunk in stream_chunks(self.partial)[: self.after_chunks]:
                write_piece(handler, f"data: {json.dumps(chunk)}\n\n".encode())
        released.wait(self.hold)
        handler.close_connection = True


@dataclass
class Huge:
    size: int
    status: int = 200
    head: bytes = b'{"choices": [{"index": 0, "message": {"content": "'
    content_type: str = "application/json"
    declare: bool = True
    sent: int = 0

    def perform(self, handler: BaseHTTPRequestHandler, released: threading.Event) -> None:
        handler.send_response(self.status)
        handler.send_header("Content-Type", self.content_type)
        if self.declare:
            handler.send_header("Content-Length", str(self.size))
        else:
            handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        handler.close_connection = True
        block = b"x" * PIECE
        piece = self.head + block[: PIECE - len(self.head)]
        while self.sent < self.size and not released.is_set():
            piece = piece[: self.size - self.sent]
            if self.declare:
                handler.wfile.write(piece)
            else:
                write_piece(handler, piece)
            self.sent += len(piece)
            piece = block
