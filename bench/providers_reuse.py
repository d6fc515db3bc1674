"""What the first model call of a session costs against the later ones (connection reuse).

Against the local fake model server, over plain HTTP and over TLS (a certificate
made with the openssl command for 127.0.0.1; the server speaks HTTP/1.1), a
session makes `--calls` streamed calls through `OpenAIStreamingModel` and one
`ProviderPool`, timing each from the call to the first text delta (time to
first byte, TTFB) and to the end of the answer. Call 1 opens the connection
(and does the TLS handshake); calls 2..N reuse it. For contrast the same calls
run with a fresh pool per call (a new client and connection every time), and
with the end of the body after `[DONE]` left unread (`DRAIN_SECONDS = 0`),
which is how the pool behaved before: every call then paid for a new
connection. Loopback hides network latency: on a real network a TCP handshake
costs one round trip and TLS 1.3 one more, so the gap only grows. Each figure
is the median over `--sessions` sessions.

    .venv/bin/python bench/providers_reuse.py [--calls 10] [--sessions 7]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import certifi
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coding_harness.daemon.config.profiles import ProviderProfile
from coding_harness.daemon.providers import openai_stream
from coding_harness.daemon.providers.pool import ProviderPool
from tests.support.fake_model_server import FakeModelServer, Reply

PAYLOAD = {"model": "fake", "messages": [{"role": "user", "content": "hi"}]}
ANSWER = Reply(content="Fine, here is the answer you asked for. " * 3)


class FirstDelta:
    """A sink that notes when the first text arrived."""

    def __init__(self) -> None:
        self.at: float | None = None

    def text_delta(self, text: str) -> None:
        if self.at is None:
            self.at = time.perf_counter()

    def reasoning_delta(self, text: str) -> None:
        pass


async def one_call(pool: ProviderPool, profile: ProviderProfile) -> tuple[float, float]:
    """(TTFB, total) of one streamed call, in milliseconds."""
    sink = FirstDelta()
    start = time.perf_counter()
    await pool.model_for(profile, None).complete(PAYLOAD, sink)
    end = time.perf_counter()
    assert sink.at is not None
    return (sink.at - start) * 1000, (end - start) * 1000


async def session(endpoint: str, calls: int, fresh: bool) -> list[tuple[float, float]]:
    profile = ProviderProfile(name="fake", type="openai", endpoint=endpoint, model="fake")
    times = []
    pool = ProviderPool()
    for _ in range(calls):
        if fresh:
            await pool.aclose()
            pool = ProviderPool()
        times.append(await one_call(pool, profile))
    await pool.aclose()
    return times


def measure(endpoint: str, calls: int, sessions: int, fresh: bool) -> dict[str, float]:
    first, later, first_total, later_total = [], [], [], []
    for _ in range(sessions):
        times = asyncio.run(session(endpoint, calls, fresh))
        first.append(times[0][0])
        first_total.append(times[0][1])
        later += [t[0] for t in times[1:]]
        later_total += [t[1] for t in times[1:]]
    return {
        "first": statistics.median(first),
        "later": statistics.median(later),
        "first_total": statistics.median(first_total),
        "later_total": statistics.median(later_total),
    }


@contextmanager
def tls_context() -> Iterator[ssl.SSLContext | None]:
    """A server context for 127.0.0.1. New clients trust it through SSL_CERT_FILE, set to
    the usual CA bundle plus this certificate, so making a client costs what it does in
    the daemon (loading ~150 CA certificates) for http and https alike."""
    openssl = shutil.which("openssl")
    if openssl is None:
        yield None
        return
    with tempfile.TemporaryDirectory() as folder:
        cert, key = Path(folder) / "cert.pem", Path(folder) / "key.pem"
        command = [
            *(openssl, "req", "-x509", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"),
            *("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"),
            *("-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)),
        ]
        subprocess.run(command, check=True, capture_output=True)
        bundle = Path(folder) / "bundle.pem"
        bundle.write_text(Path(certifi.where()).read_text() + cert.read_text())
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert, key)
        os.environ["SSL_CERT_FILE"] = str(bundle)
        yield context


def client_cost(runs: int = 20) -> float:
    """Milliseconds to make one `httpx.AsyncClient` (its TLS context and CA bundle)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        httpx.AsyncClient()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def report(label: str, server: FakeModelServer, calls: int, sessions: int) -> None:
    before = server.connections
    for mode, fresh in (("one pool", False), ("fresh pool per call", True)):
        figures = measure(server.endpoint, calls, sessions, fresh)
        print(
            f"| {label} | {mode} | {figures['first']:.2f} ms | {figures['later']:.2f} ms"
            f" | {figures['first_total']:.2f} ms | {figures['later_total']:.2f} ms |"
        )
    drain = openai_stream.DRAIN_SECONDS
    openai_stream.DRAIN_SECONDS = 0.0  # as before: the end of the body is left unread
    start = server.connections
    figures = measure(server.endpoint, calls, sessions, False)
    openai_stream.DRAIN_SECONDS = drain
    print(
        f"| {label} | one pool, body end unread | {figures['first']:.2f} ms"
        f" | {figures['later']:.2f} ms | {figures['first_total']:.2f} ms"
        f" | {figures['later_total']:.2f} ms |"
    )
    unread = server.connections - start
    print(f"<!-- {label}: {start - before} connections with draining, {unread} without -->")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--sessions", type=int, default=7)
    args = parser.parse_args()
    total = 3 * args.calls * args.sessions
    with tls_context() as context:
        print(f"{args.calls} calls a session, median of {args.sessions} sessions;")
        print(f"making one httpx.AsyncClient: {client_cost():.1f} ms")
        print("| endpoint | pool | TTFB call 1 | TTFB calls 2..N | call 1 | calls 2..N |")
        print("| --- | --- | --- | --- | --- | --- |")
        with FakeModelServer([ANSWER] * total) as server:
            report("http", server, args.calls, args.sessions)
        if context is None:
            print("(no openssl command: the TLS rows were skipped)")
            return
        with FakeModelServer([ANSWER] * total, tls=context) as server:
            report("https (TLS, HTTP/1.1)", server, args.calls, args.sessions)


if __name__ == "__main__":
    main()
