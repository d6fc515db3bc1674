"""Acts for the fake model server that answer as real servers nobody here wrote do.

`LlamaCppPython(server, reply)` answers one request the way llama-cpp-python's
server (0.3.x, `--chat_format chatml-function-calling`) does:

- a message whose `content` is not a string (null, or missing) gets HTTP 500
  with a pydantic validation error naming `messages.N.content`;
- `"stream": true` on a request with tools gets a 200 event stream that is
  aborted before its first event (its log says "Automatic streaming tool choice
  is not supported");
- anything else gets `reply`, streamed or whole as asked.

It reads the request from `server.requests` (the server records each body
before an Act performs), so requests must come one at a time.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.fake_model_server import (
    FakeModelServer,
    Reply,
    completion,
    start_stream,
    stream_chunks,
    write_piece,
)


def validation_error(index: int) -> str:
    """A body of the shape llama-cpp-python sends for an invalid request (HTTP 500)."""
    message = (
        "1 validation error for CreateChatCompletionRequest\n"
        f"messages.{index}.content\n"
        "  Input should be a valid string [type=string_type, input_value=None,"
        " input_type=NoneType]"
    )
    error = {"message": message, "type": "internal_server_error", "param": None, "code": None}
    return json.dumps({"error": error})


def first_bad_content(payload: dict[str, Any]) -> int | None:
    """Index of the first message whose content is not a string."""
    for index, message in enumerate(payload.get("messages") or []):
        if not isinstance(message.get("content"), str):
            return index
    return None


def _send(handler: BaseHTTPRequestHandler, status: int, body: str) -> None:
    data = body.encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


@dataclass
class LlamaCppPython:
    server: FakeModelServer
    reply: Reply

    def perform(self, handler: BaseHTTPRequestHandler, released: threading.Event) -> None:
        payload = self.server.requests[-1]
        bad = first_bad_content(payload)
        if bad is not None:
            _send(handler, 500, validation_error(bad))
        elif payload.get("stream") and payload.get("tools"):
            start_stream(handler)
            handler.close_connection = True  # the body ends with no chunk at all
        elif payload.get("stream"):
            start_stream(handler)
            for chunk in stream_chunks(self.reply):
                write_piece(handler, f"data: {json.dumps(chunk)}\n\n".encode())
            write_piece(handler, b"data: [DONE]\n\n")
            handler.wfile.write(b"0\r\n\r\n")
            handler.wfile.flush()
        else:
            _send(handler, 200, json.dumps(completion(self.reply)))
