"""Event relay: events per second and latency to 1, 10 and 50 attached clients.

One session streams a long answer from the fake model server (one `text.delta`
event per 7 characters); N raw clients attached to it read every event on one
selector thread. One of them decodes each event and times it: latency is from
the daemon emitting the event (its `at` field) to that client decoding it,
while the others read and count. Prints the delivered message rate (all
clients together) and the median and 99th-percentile latency.

    .venv/bin/python bench/relay.py [--chars 21000]
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coding_harness.protocol.framing import LineDecoder
from tests.support.fake_model_server import FakeModelServer, Reply
from tests.support.processes import client, start_daemon


def raw_client(path: Path, session: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(str(path))
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocol": 1}}
    attach = {"jsonrpc": "2.0", "id": 2, "method": "session.attach", "params": {"session": session}}
    sock.sendall((json.dumps(hello) + "\n" + json.dumps(attach) + "\n").encode())
    return sock


def measure(socket_path: Path, cwd: Path, clients: int) -> tuple[float, list[float], int]:
    with client(socket_path, "bench") as control:
        session = control.request("session.create", {"cwd": str(cwd)})["session"]
        socks = [raw_client(socket_path, session) for _ in range(clients)]
        time.sleep(0.2)
        selector = selectors.DefaultSelector()
        decoders = {}
        for sock in socks:
            selector.register(sock, selectors.EVENT_READ)
            decoders[sock] = LineDecoder()
        control.request("session.submit", {"session": session, "text": "go"})
        latencies, finished, lines, start = [], 0, 0, time.time()
        timed = socks[0]  # one client decodes and times every event; the rest count lines
        while finished < clients:
            for key, _ in selector.select(timeout=30):
                sock = key.fileobj
                data = sock.recv(1 << 20)  # type: ignore[union-attr]
                if sock is not timed:
                    lines += data.count(b"\n")
                    finished += data.count(b'"turn.finished"')
                    continue
                for line in decoders[sock].feed(data):
                    lines += 1
                    params = json.loads(line).get("params")
                    if params:
                        latencies.append(time.time() - params["at"])
                        finished += params["kind"] == "turn.finished"
        elapsed = time.time() - start
        for sock in socks:
            sock.close()
    return elapsed, latencies, lines // clients


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chars", type=int, default=21_000)
    chars = parser.parse_args().chars
    root = Path(tempfile.mkdtemp(prefix="chr-", dir="/tmp"))
    (root / "home").mkdir()
    (root / "ws").mkdir()
    socket_path = root / "run" / "harnessd.sock"
    env = dict(
        os.environ,
        HOME=str(root / "home"),
        XDG_STATE_HOME=str(root / "state"),
        CODING_HARNESS_SOCKET=str(socket_path),
    )
    server = FakeModelServer([Reply(content="y" * chars) for _ in range(3)]).start()
    config = {"providers": {"fake": {"type": "openai", "endpoint": server.endpoint, "model": "m"}}}
    (root / "home" / ".coding_harness.json").write_text(json.dumps(config))
    daemon = start_daemon(socket_path, env)
    try:
        print(f"{'clients':>7} {'events/turn':>11} {'delivered/s':>12} {'p50 ms':>8} {'p99 ms':>8}")
        for clients in (1, 10, 50):
            elapsed, latencies, per_client = measure(socket_path, root / "ws", clients)
            latencies.sort()
            p50 = statistics.median(latencies) * 1000
            p99 = latencies[int(len(latencies) * 0.99)] * 1000
            rate = per_client * clients / elapsed
            print(f"{clients:>7} {per_client:>11} {rate:>12.0f} {p50:>8.2f} {p99:>8.2f}")
    finally:
        daemon.terminate()
        daemon.wait(timeout=10)
        server.stop()


if __name__ == "__main__":
    main()
