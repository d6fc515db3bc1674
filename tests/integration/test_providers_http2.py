"""HTTP/2 where the server offers it, over real TLS on loopback.

A small HTTPS server that speaks only HTTP/2 (ALPN "h2") streams scripted answers; the
pool's client for an https endpoint negotiates HTTP/2 with it, streams the SSE answer and
reuses one connection. An https server without HTTP/2 gets HTTP/1.1, and plain http stays
on HTTP/1.1 (no h2c). The certificate is made with the openssl command for 127.0.0.1 and
trusted through SSL_CERT_FILE, which httpx reads when a client is made.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import h2.config
import h2.connection
import h2.errors
import h2.events
import pytest

from coding_harness.daemon.agent.model_errors import ModelError
from coding_harness.daemon.agent.seams import JSONObject, ModelReply
from coding_harness.daemon.config.profiles import ProviderProfile, RetrySettings
from coding_harness.daemon.providers.pool import ProviderPool, shared_tls
from coding_harness.daemon.providers.retrying import RetryingModel
from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import (
    NO_NOTES,
    FakeModelServer,
    Reply,
    completion,
    stream_chunks,
    tool_call,
)
from tests.support.notes_requests import is_notes_request
from tests.support.processes import run_harness
from tests.support.sinks import RecordingSink

PAYLOAD: JSONObject = {"model": "fake", "messages": [{"role": "user", "content": "hi"}]}


@dataclass
class Reset:
    """Stream the first `after_chunks` chunks of `reply`, then reset the stream (RST_STREAM)."""

    reply: Reply
    after_chunks: int


class H2ModelServer:
    """An HTTPS server that speaks HTTP/2 only; each POST gets the next scripted `Reply`
    as an SSE stream. `connections` counts TLS connections, `requests` the bodies."""

    def __init__(self, context: ssl.SSLContext, script: list[Reply | Reset]) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self.connections = 0
        self._context = context
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    def __enter__(self) -> H2ModelServer:
        self._thread.start()
        start = asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self._context)
        self._server = asyncio.run_coroutine_threadsafe(start, self._loop).result(timeout=10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self._loop.close()

    async def _close(self) -> None:
        """Stop listening, end the connections still open (a daemon keeps its own)."""
        if self._server is not None:
            self._server.close()
        writers = list(self._writers)
        for writer in writers:
            writer.transport.abort()
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)
        closing = asyncio.gather(*(w.wait_closed() for w in writers), return_exceptions=True)
        await asyncio.wait_for(closing, 5)  # the TLS transports have finished closing

    @property
    def endpoint(self) -> str:
        assert self._server is not None
        port = self._server.sockets[0].getsockname()[1]
        return f"https://127.0.0.1:{port}/v1/chat/completions"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self._writers.add(writer)
        conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
        conn.initiate_connection()
        writer.write(conn.data_to_send())
        bodies: dict[int, bytearray] = {}
        try:
            while data := await reader.read(65_536):
                for event in conn.receive_data(data):
                    self._on_event(conn, event, bodies)
                writer.write(conn.data_to_send())
                await writer.drain()
        except (ConnectionError, ssl.SSLError):
            pass
        finally:
            self._writers.discard(writer)
            writer.close()

    def _on_event(self, conn: Any, event: Any, bodies: dict[int, bytearray]) -> None:
        if isinstance(event, h2.events.RequestReceived):
            bodies[event.stream_id] = bytearray()
        elif isinstance(event, h2.events.DataReceived):
            bodies[event.stream_id] += event.data
            conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            body = bytes(bodies.pop(event.stream_id))
            if not body:  # a GET (the daemon asking for the window): not a model server's
                conn.send_headers(event.stream_id, [(":status", "404")], end_stream=True)
                return
            payload = json.loads(body)
            if is_notes_request(payload):  # the turn-close notes call: answered apart
                body = json.dumps(completion(NO_NOTES)).encode()
                conn.send_headers(event.stream_id, [(":status", "200")])
                conn.send_data(event.stream_id, body, end_stream=True)
                return
            self.requests.append(payload)
            self._answer(conn, event.stream_id, self.script.pop(0))

    def _answer(self, conn: Any, stream_id: int, item: Reply | Reset) -> None:
        conn.send_headers(stream_id, [(":status", "200"), ("content-type", "text/event-stream")])
        reply = item.reply if isinstance(item, Reset) else item
        chunks = stream_chunks(reply)
        if isinstance(item, Reset):
            chunks = chunks[: item.after_chunks]
        for chunk in chunks:
            conn.send_data(stream_id, f"data: {json.dumps(chunk)}\n\n".encode())
        if isinstance(item, Reset):
            conn.reset_stream(stream_id, error_code=h2.errors.ErrorCodes.INTERNAL_ERROR)
        else:
            conn.send_data(stream_id, b"data: [DONE]\n\n", end_stream=True)


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("the openssl command is needed to make a test certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    command = [
        *(openssl, "req", "-x509", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1"),
        *("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"),
        *("-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)),
    ]
    subprocess.run(command, check=True, capture_output=True)
    return cert, key


def server_context(certificate: tuple[Path, Path], alpn: list[str]) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(*certificate)
    context.set_alpn_protocols(alpn)
    return context


@pytest.fixture
def trusted(certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The test certificate trusted, in a TLS context made for it: the pool keeps one
    context per process (`shared_tls`), which an earlier test on this worker may have
    made without it."""
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    shared_tls.cache_clear()
    yield
    shared_tls.cache_clear()


def profile(endpoint: str) -> ProviderProfile:
    return ProviderProfile(name="fake", type="openai", endpoint=endpoint, model="fake")


def ask_and_probe(endpoint: str, calls: int = 1) -> tuple[list[ModelReply], str]:
    """`calls` streamed model calls through one pool, then the HTTP version its client
    speaks to the endpoint (from a plain request on the same pooled client)."""

    async def go() -> tuple[list[ModelReply], str]:
        pool = ProviderPool()
        try:
            model = pool.model_for(profile(endpoint), None)
            replies = [await model.complete(PAYLOAD, RecordingSink()) for _ in range(calls)]
            client = pool.client_for(profile(endpoint))
            response = await client.post(endpoint, json={**PAYLOAD, "stream": True})
            return replies, response.http_version
        finally:
            await pool.aclose()

    return asyncio.run(go())


@pytest.mark.usefixtures("trusted")
def test_an_https_server_offering_http2_gets_it(certificate: tuple[Path, Path]) -> None:
    answers = [
        Reply(content="over h2", completion_tokens=3),
        Reply(tool_calls=[tool_call("read_file", path="calc.py")]),
        Reply(content="again"),
        Reply(content="probe"),
    ]
    with H2ModelServer(server_context(certificate, ["h2"]), answers) as server:
        replies, version = ask_and_probe(server.endpoint, calls=3)
    assert version == "HTTP/2"
    assert [r.content for r in replies] == ["over h2", "", "again"]
    assert json.loads(replies[1].tool_calls[0].arguments) == {"path": "calc.py"}
    assert replies[0].usage is not None and replies[0].usage.completion_tokens == 3
    assert server.connections == 1  # four requests, one TLS connection
    assert all(r["stream"] is True for r in server.requests)


@pytest.mark.usefixtures("trusted")
def test_an_https_server_without_http2_gets_http1(certificate: tuple[Path, Path]) -> None:
    script: list[Any] = [Reply(content="over TLS and HTTP/1.1"), Reply(content="probe")]
    context = server_context(certificate, ["http/1.1"])
    with FakeModelServer(script, tls=context) as server:
        assert server.endpoint.startswith("https://")
        replies, version = ask_and_probe(server.endpoint)
    assert version == "HTTP/1.1"
    assert replies[0].content == "over TLS and HTTP/1.1"
    assert server.connections == 1


@pytest.mark.usefixtures("trusted")
def test_a_stream_reset_before_any_text_is_asked_again_on_the_same_connection(
    certificate: tuple[Path, Path],
) -> None:
    call = Reply(tool_calls=[tool_call("read_file", path="calc.py")])
    script: list[Reply | Reset] = [Reset(call, after_chunks=2), call]
    notices: list[str] = []

    async def go(endpoint: str) -> ModelReply | ModelError:
        pool = ProviderPool()
        settings = RetrySettings(attempts=2, base_delay=0.01, max_delay=0.01)
        plain = pool.model_for(profile(endpoint), None)
        model = RetryingModel(plain, notices.append, settings=settings)
        try:
            return await model.complete(PAYLOAD, RecordingSink())
        except ModelError as exc:
            return exc
        finally:
            await pool.aclose()

    with H2ModelServer(server_context(certificate, ["h2"]), script) as server:
        result = asyncio.run(go(server.endpoint))
    assert isinstance(result, ModelReply), result
    assert json.loads(result.tool_calls[0].arguments) == {"path": "calc.py"}
    assert "cut off before any of it was shown" in notices[0]
    assert server.connections == 1 and len(server.requests) == 2


def test_plain_http_stays_on_http1() -> None:
    with FakeModelServer([Reply(content="plain"), Reply(content="probe")]) as server:
        replies, version = ask_and_probe(server.endpoint)
    assert version == "HTTP/1.1"
    assert replies[0].content == "plain"


def test_a_one_shot_run_over_http2(sandbox: Sandbox, certificate: tuple[Path, Path]) -> None:
    """The daemon, started by `harness` with SSL_CERT_FILE set, answers over HTTP/2."""
    answers = [Reply(content="Hello over HTTP/2.", prompt_tokens=11, completion_tokens=4)]
    with H2ModelServer(server_context(certificate, ["h2"]), answers) as server:
        sandbox.write_config(server.endpoint)
        env = {**sandbox.env, "SSL_CERT_FILE": str(certificate[0])}
        result = run_harness(
            ["--output-format", "json", "-p", "say hello"], env=env, cwd=sandbox.workspace
        )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["reply"] == "Hello over HTTP/2."
    assert report["usage"]["completion_tokens"] == 4
    assert server.connections == 1
