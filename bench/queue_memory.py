"""Daemon memory when a client sends requests and never reads the replies.

A session holds a history of about `--history-mb` megabytes (loaded with
`session.reset`); one raw client sends `--requests` `session.history` calls
without reading a byte of the answers, then hangs up. Prints the daemon's
resident memory before, at its peak while the replies wait, and 3 s after
the client left, and how the requests were answered once read (results,
"server overloaded" errors).

    .venv/bin/python bench/queue_memory.py [--requests 3000] [--history-mb 1]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.processes import client, start_daemon

MB = 1024 * 1024


def history(megabytes: float) -> list[dict[str, str]]:
    piece = "x" * 100_000
    count = max(2, int(megabytes * MB / len(piece)))
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": piece} for i in range(count)]


def flood(path: Path, session: str, requests: int) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(str(path))
    hello = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocol": 1}}
    sock.sendall((json.dumps(hello) + "\n").encode())
    params = {"session": session}
    calls = b"".join(
        json.dumps(
            {"jsonrpc": "2.0", "id": i, "method": "session.history", "params": params}
        ).encode()
        + b"\n"
        for i in range(1, requests + 1)
    )
    # The daemon may stop reading this connection; send from a thread that can block.
    threading.Thread(target=_send_quietly, args=(sock, calls), daemon=True).start()
    return sock


def _send_quietly(sock: socket.socket, data: bytes) -> None:
    with contextlib.suppress(OSError):
        sock.sendall(data)


def watch_peak(process: psutil.Process, settle: float = 2.0, limit: float = 120.0) -> int:
    """Highest RSS seen until it has not grown for `settle` seconds."""
    peak, last_growth, start = 0, time.monotonic(), time.monotonic()
    while time.monotonic() - last_growth < settle and time.monotonic() - start < limit:
        rss = process.memory_info().rss
        if rss > peak:
            peak, last_growth = rss, time.monotonic()
        time.sleep(0.05)
    return peak


def count_answers(sock: socket.socket, requests: int) -> tuple[int, int, int]:
    """Read what the daemon queued for the flooding client: results, overloaded, other."""
    sock.settimeout(5)
    results = overloaded = other = 0
    buffer = b""
    try:
        while results + overloaded + other < requests + 1:
            chunk = sock.recv(1 << 20)
            if not chunk:
                break
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                message = json.loads(line)
                if "result" in message:
                    results += 1
                elif message.get("error", {}).get("code") == -32016:
                    overloaded += 1
                else:
                    other += 1
    except (TimeoutError, OSError):
        pass
    return results - 1, overloaded, other  # minus the initialize result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--history-mb", type=float, default=1.0)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="chq-", dir="/tmp"))
    (root / "home").mkdir()
    (root / "ws").mkdir()
    socket_path = root / "run" / "harnessd.sock"
    env = dict(
        os.environ,
        HOME=str(root / "home"),
        XDG_STATE_HOME=str(root / "state"),
        CODING_HARNESS_SOCKET=str(socket_path),
    )
    daemon = start_daemon(socket_path, env)
    process = psutil.Process(daemon.pid)
    try:
        with client(socket_path, "bench") as control:
            session = control.request("session.create", {"cwd": str(root / "ws")})["session"]
            messages = history(args.history_mb)
            control.request("session.reset", {"session": session, "messages": messages})
        time.sleep(0.5)
        before = process.memory_info().rss
        sock = flood(socket_path, session, args.requests)
        peak = watch_peak(process)
        sock.close()  # without reading a byte
        time.sleep(3)
        after = process.memory_info().rss
        # Again, and this time read what was queued: how were the calls answered?
        sock = flood(socket_path, session, args.requests)
        watch_peak(process)
        answered = count_answers(sock, args.requests)
        sock.close()
        size = len(json.dumps(messages)) / MB
        print(f"history {size:.1f} MB, {args.requests} unread session.history calls")
        print(f"daemon RSS before {before / MB:.0f} MB, peak {peak / MB:.0f} MB,")
        print(f"  3 s after the client left {after / MB:.0f} MB")
        print("answers read afterwards: {} results, {} overloaded, {} other".format(*answered))
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)


if __name__ == "__main__":
    main()
