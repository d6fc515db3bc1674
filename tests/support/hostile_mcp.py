"""MCP servers that try to freeze or fill the daemon, for tests and bench/mcp_stall.py.

Run as a process: `python tests/support/hostile_mcp.py stdio [--tools N]` speaks
newline-delimited JSON-RPC on stdin/stdout; `python tests/support/hostile_mcp.py
http --port 0 [--tools N]` serves Streamable HTTP (JSON answers only, no event
stream) on loopback and prints its URL once it listens. Both list `echo {text}`,
which answers the text and the server's pid, `flood {}`, whose answer never
ends: one endless line on stdout, or an endless chunked JSON body, and `blocks
{}`, a valid answer of `BLOCKS` one-character text blocks (about 3 MB). With
`--tools N` they list N more tools (`tool_0000` ...), each with a schema whose
`$ref`s multiply (3 references to the next of 7 definitions: 3**7 copies once
followed). With `--noisy` the stdio one writes to its standard error without
end. `HostileHttp` runs the HTTP one on a free port and stops it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import threading
from typing import Any

CHUNK = b"x" * 65536
BLOCKS = 120_000
PREAMBLE = b'{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"'


def multiplying_schema() -> dict[str, Any]:
    defs: dict[str, Any] = {
        f"d{k}": {"properties": {p: {"$ref": f"#/$defs/d{k + 1}"} for p in "abc"}} for k in range(7)
    }
    defs["d7"] = {"type": "string"}
    return {"type": "object", "properties": {"q": {"$ref": "#/$defs/d0"}}, "$defs": defs}


def tool_list(extra: int) -> list[dict[str, Any]]:
    text = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    tools = [
        {"name": "echo", "description": "Answer the text.", "inputSchema": text},
        {"name": "flood", "description": "Answer forever.", "inputSchema": {"type": "object"}},
        {"name": "blocks", "description": "Answer in pieces.", "inputSchema": {"type": "object"}},
    ]
    schema = multiplying_schema()
    tools += [
        {"name": f"tool_{i:04d}", "description": f"Tool {i}.", "inputSchema": schema}
        for i in range(extra)
    ]
    return tools


def answer(message: dict[str, Any], extra: int) -> dict[str, Any] | None:
    """The answer to one message (None for a notification, and for `flood`)."""
    method, ident = message.get("method"), message.get("id")
    if ident is None:
        return None
    params = message.get("params") or {}
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": tool_list(extra)}
    elif method == "tools/call" and params.get("name") == "echo":
        text = f"{params.get('arguments', {}).get('text', '')} (pid {os.getpid()})"
        result = {"content": [{"type": "text", "text": text}]}
    elif method == "tools/call" and params.get("name") == "blocks":
        result = {"content": [{"type": "text", "text": "x"}] * BLOCKS}
    elif method == "ping":
        result = {}
    else:
        error = {"code": -32601, "message": f"no method {method}"}
        return {"jsonrpc": "2.0", "id": ident, "error": error}
    return {"jsonrpc": "2.0", "id": ident, "result": result}


def is_flood(message: dict[str, Any]) -> bool:
    params = message.get("params") or {}
    return message.get("method") == "tools/call" and params.get("name") == "flood"


def shout() -> None:
    while True:  # until the daemon ends this process
        sys.stderr.buffer.write(CHUNK)


def serve_stdio(extra: int) -> None:
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        message = json.loads(line)
        if is_flood(message):
            out.write(PREAMBLE % message["id"])
            while True:  # until the daemon stops reading and ends this process
                out.write(CHUNK)
        reply = answer(message, extra)
        if reply is not None:
            out.write(json.dumps(reply, separators=(",", ":")).encode() + b"\n")
            out.flush()


async def serve_http(port: int, extra: int) -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await _one_request(reader, writer, extra):
                pass
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", port, limit=1 << 20)
    print(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/mcp", flush=True)
    async with server:
        await server.serve_forever()


async def _one_request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, extra: int
) -> bool:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method = lines[0].split(" ")[0]
    headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
    body = await reader.readexactly(int(headers.get("content-length") or 0))
    if method != "POST":
        writer.write(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n")
        await writer.drain()
        return True
    message = json.loads(body)
    if is_flood(message):
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
            b"transfer-encoding: chunked\r\n\r\n"
        )
        piece = PREAMBLE % message["id"]
        while True:  # until the daemon hangs up
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            await writer.drain()
            piece = CHUNK
    reply = answer(message, extra)
    if reply is None:
        writer.write(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n")
    else:
        data = json.dumps(reply, separators=(",", ":")).encode()
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
            b"content-length: %d\r\n\r\n%s" % (len(data), data)
        )
    await writer.drain()
    return True


class HostileHttp:
    """The HTTP server as a process on a free loopback port: `with HostileHttp() as url`."""

    def __init__(self, tools: int = 0) -> None:
        self._args = [sys.executable, __file__, "http", "--port", "0", "--tools", str(tools)]
        self.process: subprocess.Popen[str] | None = None

    def __enter__(self) -> str:
        self.process = subprocess.Popen(self._args, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        return self.process.stdout.readline().strip()

    def __exit__(self, *exc: object) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)
            if self.process.stdout is not None:
                self.process.stdout.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=("stdio", "http"))
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--tools", type=int, default=0)
    parser.add_argument("--noisy", action="store_true")
    options = parser.parse_args()
    if options.noisy:
        threading.Thread(target=shout, daemon=True).start()
    if options.mode == "stdio":
        serve_stdio(options.tools)
    else:
        asyncio.run(serve_http(options.port, options.tools))


if __name__ == "__main__":
    main()
