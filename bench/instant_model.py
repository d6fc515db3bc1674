"""An OpenAI-compatible model that answers every request at once, for benchmarks.

Each POST gets the same streamed reply, rendered once in advance as the test
suite's fake server renders it (`stream_chunks`: content deltas, a usage chunk,
`data: [DONE]`) and written in one send, over a kept-alive connection. The
test suite's `FakeModelServer` (`http.server`) spends 1.5 to 2 ms of its own
on each request, on the same two cores as the client and the daemon; here
nearly nothing is spent, so a benchmark measures the harness. With `latency`
each answer to a POST waits that many seconds first (a model that takes its time; the
connections are served side by side), and `most_at_once` records the most
requests it had at once. With `pace` the chunks of an answer go out that many
seconds apart (a model that streams at a steady rate).
"""

from __future__ import annotations

import json
import socket
import threading
import time

from tests.support.fake_model_server import Reply, stream_chunks

_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"


def _piece(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def rendered_parts(reply: Reply) -> list[bytes]:
    """The HTTP response streaming `reply`, in the pieces it is sent in."""
    body = [_piece(f"data: {json.dumps(chunk)}\n\n".encode()) for chunk in stream_chunks(reply)]
    return [_HEAD, *body, _piece(b"data: [DONE]\n\n") + b"0\r\n\r\n"]


def rendered(reply: Reply) -> bytes:
    """The whole HTTP response streaming `reply`."""
    return b"".join(rendered_parts(reply))


class InstantModel:
    def __init__(self, content: str = "ok", latency: float = 0.0, pace: float = 0.0) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.endpoint = f"http://127.0.0.1:{self._listener.getsockname()[1]}/v1"
        self._answer = rendered(Reply(content=content))
        # With `pace`, each streamed chunk is sent that many seconds after the one before.
        self._parts = rendered_parts(Reply(content=content))
        self.pace = pace
        self.requests = 0
        self.latency = latency
        self.in_flight = self.most_at_once = self.posts = 0
        self._lock = threading.Lock()

    def start(self) -> InstantModel:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def stop(self) -> None:
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return  # stopped
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        waiting = b""
        with conn:
            while True:
                while b"\r\n\r\n" not in waiting:
                    data = conn.recv(65536)
                    if not data:
                        return
                    waiting += data
                head, _, waiting = waiting.partition(b"\r\n\r\n")
                length = _content_length(head)
                while len(waiting) < length:
                    data = conn.recv(65536)
                    if not data:
                        return
                    waiting += data
                waiting = waiting[length:]
                self.requests += 1
                if self.latency and head.startswith(b"POST"):  # a look-up is answered at once
                    self._wait()
                if self.pace and head.startswith(b"POST"):
                    for part in self._parts:
                        conn.sendall(part)
                        time.sleep(self.pace)
                else:
                    conn.sendall(self._answer)

    def _wait(self) -> None:
        with self._lock:
            self.posts += 1
            self.in_flight += 1
            self.most_at_once = max(self.most_at_once, self.in_flight)
        time.sleep(self.latency)
        with self._lock:
            self.in_flight -= 1


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 0
