"""A Streamable HTTP MCP server for tests, built with the official SDK.

Its tools: `echo {text}` answers the text; `add {a, b}` answers the sum as
structured content (`{"sum": N}`) and as text; `fail {}` answers an error
result (isError) whose text says what went wrong; `slow {seconds}` sleeps that
long, then answers (a server that hangs, for per-call timeouts); `image {}`
answers one small PNG image.

Run it as a process: `python tests/support/mcp_http_server.py --port 0
[--token T] [--header NAME=VALUE ...]` prints its URL (`http://127.0.0.1:PORT/mcp`)
on standard output once it listens. With `--token`, a request without
`Authorization: Bearer T` gets 401; with `--header`, one without that header and
value gets 401 too. `McpHttpServer` (a context manager) runs it as such a
process on a free loopback port and stops it afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import socket
import subprocess
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any, TypedDict

from mcp.server.mcpserver import Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

ROOT = Path(__file__).resolve().parents[2]
# A 1x1 transparent PNG.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class Sum(TypedDict):
    sum: int


def build_server() -> MCPServer[Any]:
    """The MCPServer with the test tools."""
    server = MCPServer("harness-test-http", log_level="WARNING")

    @server.tool()
    def echo(text: str) -> str:
        """Answer the text given."""
        return text

    @server.tool()
    def add(a: int, b: int) -> Sum:
        """Add two integers."""
        return {"sum": a + b}

    @server.tool()
    def fail() -> str:
        """Always fails, as a tool error the model can read."""
        raise ToolError("fail: the test server refuses this on purpose")

    @server.tool()
    async def slow(seconds: float) -> str:
        """Sleep that many seconds, then answer."""
        await asyncio.sleep(seconds)
        return f"slept {seconds} s"

    @server.tool()
    def image() -> Image:
        """One 1x1 PNG image."""
        return Image(data=PIXEL, format="png")

    return server


def guarded(app: App, required: dict[bytes, bytes]) -> App:
    """`app` behind a check of the request headers: any one missing or different is 401."""

    async def check(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            if any(headers.get(name) != value for name, value in required.items()):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"text/plain"),
                            (b"www-authenticate", b"Bearer"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": b"unauthorized\n"})
                return
        await app(scope, receive, send)

    return check


def required_headers(token: str | None, pairs: list[str]) -> dict[bytes, bytes]:
    required: dict[bytes, bytes] = {}
    if token:
        required[b"authorization"] = f"Bearer {token}".encode()
    for pair in pairs:
        name, _, value = pair.partition("=")
        required[name.strip().lower().encode()] = value.encode()
    return required


def serve(port: int, token: str | None, pairs: list[str]) -> None:
    import uvicorn

    app = build_server().streamable_http_app(host="127.0.0.1")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    # The socket already takes connections: a client that reads the URL may connect at once.
    print(f"http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    config = uvicorn.Config(
        guarded(app, required_headers(token, pairs)), log_level="warning", lifespan="on"
    )
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


class McpHttpServer:
    """The server as a process on a free loopback port: `with McpHttpServer(token="T") as s:`
    then `s.url`. It is stopped (terminated, then killed) on exit."""

    def __init__(self, *, token: str | None = None, headers: dict[str, str] | None = None) -> None:
        self.token = token
        self.headers = dict(headers or {})
        self.url = ""
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> McpHttpServer:
        command = [sys.executable, str(Path(__file__).resolve()), "--port", "0"]
        if self.token:
            command += ["--token", self.token]
        for name, value in self.headers.items():
            command += ["--header", f"{name}={value}"]
        self.process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True, cwd=ROOT
        )
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().strip()
        if not self.url.startswith("http://"):
            self.stop()
            raise RuntimeError("the test MCP HTTP server did not start (no URL printed)")
        return self

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)
        if self.process.stdout is not None:
            self.process.stdout.close()

    def __enter__(self) -> McpHttpServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A Streamable HTTP MCP server for tests")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--token", help="require Authorization: Bearer TOKEN")
    parser.add_argument("--header", action="append", default=[], help="require NAME=VALUE")
    args = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        serve(args.port, args.token, args.header)


if __name__ == "__main__":
    main()
