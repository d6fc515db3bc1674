"""A fake model server for sessions that run side by side: a script per task, and a
count of the requests it has at once.

`RoutedModelServer.route(marker, *items)` scripts the answers to the requests
whose user messages hold `marker` (the task's own words), so sessions asked at
once each get their own script, whatever order their requests come in. It
records the most generation requests it had in flight at once (`most_at_once`;
the window look-ups are not counted, the turn-close notes calls are), which is
what `max_parallel` promises. `Held` answers only once its `go` is set (or the
server stops), so a test can hold a request in flight and look at the queue.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.fake_model_server import (
    FakeModelServer,
    Fault,
    Reply,
    Scripted,
    start_stream,
    stream_chunks,
    write_piece,
)
from tests.support.notes_requests import is_notes_request
from tests.support.server_windows import answers_post


@dataclass
class Held:
    """A streamed `reply` sent once `go` is set."""

    reply: Reply
    go: threading.Event = field(default_factory=threading.Event)

    def perform(self, handler: BaseHTTPRequestHandler, released: threading.Event) -> None:
        while not (self.go.wait(0.05) or released.is_set()):
            pass
        start_stream(handler)
        for chunk in stream_chunks(self.reply):
            write_piece(handler, f"data: {json.dumps(chunk)}\n\n".encode())
        ending = getattr(handler, "answered", None)
        if ending is not None:  # no longer in flight once its last piece can be read
            ending()
        write_piece(handler, b"data: [DONE]\n\n")
        handler.wfile.write(b"0\r\n\r\n")
        handler.wfile.flush()


class RoutedModelServer(FakeModelServer):
    def __init__(self) -> None:
        self.routes: dict[str, list[Scripted]] = {}
        self.in_flight = 0
        self.most_at_once = 0
        super().__init__()

    def route(self, marker: str, *items: Scripted) -> None:
        with self._lock:
            self.routes.setdefault(marker, []).extend(items)

    def _next(self, payload: dict[str, Any]) -> Scripted:
        if is_notes_request(payload):
            return super()._next(payload)
        said = " ".join(
            str(m.get("content")) for m in payload.get("messages", []) if m.get("role") == "user"
        )
        with self._lock:
            self.requests.append(payload)
            for marker, script in self.routes.items():
                if marker in said and script:
                    return script.pop(0)
        return Fault(500, '{"error": {"message": "routed fake server: no script for this"}}')

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        base: Any = super()._handler_class()
        server = self

        class Counting(base):  # type: ignore[misc, valid-type]
            counting = False

            def do_POST(self) -> None:
                self.counting = not answers_post(self.path)
                if self.counting:
                    with server._lock:
                        server.in_flight += 1
                        server.most_at_once = max(server.most_at_once, server.in_flight)
                try:
                    super().do_POST()
                finally:
                    self.answered()

            def answered(self) -> None:
                if self.counting:
                    self.counting = False
                    with server._lock:
                        server.in_flight -= 1

        return Counting
