"""Warm HTTP connections to the providers, shared by every session of the daemon.

`ProviderPool` keeps one `httpx.AsyncClient` per provider profile (its name and
the origin of its endpoint), made on first use and reused across turns,
sessions and clients, so a second request skips the TCP and TLS handshakes.
`model_for` hands out the `Model` for a profile's type; the model borrows the
client for each request, and reports each raw exchange to the recorder it was
given, if any (`exchanges.py`, for `--debug`). The pool also remembers, while the daemon runs, which
profiles' servers cannot stream a request with tools (`stream_fallback.py`),
and, in `facts`, each server's context window and which models refuse tools
(`model_facts.py`). Every model it hands out passes its profile's gate
(`model_gate.py`: `max_parallel` requests at once), in `gates`.
After a config reload, `prune` retires the clients of profiles no longer
configured: an idle one is closed at once, a busy one when its last request
ends, so a turn in flight finishes on its old settings (its next request simply
opens a fresh client). Tests pass an `httpx.MockTransport` as `transport`.

A client for an `https` endpoint offers HTTP/2 (ALPN) and uses it when the
server agrees: one TLS connection then carries every concurrent request to
that provider. A server that does not offer it is spoken to over HTTP/1.1.
Plain `http` endpoints (local servers) stay on HTTP/1.1: HTTP/2 without TLS
("h2c", by prior knowledge) is not tried, since few local servers speak it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ssl
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from coding_harness.daemon.agent.seams import Model
from coding_harness.daemon.config.profiles import ProviderProfile
from coding_harness.daemon.providers.exchanges import ExchangeRecorder
from coding_harness.daemon.providers.local_model import LocalModel
from coding_harness.daemon.providers.model_facts import ModelFacts
from coding_harness.daemon.providers.model_gate import GatedModel, ModelGates, OnQueued
from coding_harness.daemon.providers.openai_stream import STREAM_TIMEOUT, OpenAIStreamingModel
from coding_harness.daemon.providers.stream_fallback import (
    StreamOrWhole,
    WholeAnswerMemory,
    fallback_notice,
)

POOL_LIMITS = httpx.Limits(max_connections=32, max_keepalive_connections=8, keepalive_expiry=120.0)

PoolKey = tuple[str, str]


def endpoint_origin(endpoint: str) -> str:
    """scheme://host:port of a URL, lower-cased, for keying connections."""
    parts = urlsplit(endpoint)
    return f"{parts.scheme}://{parts.netloc}".lower()


def pool_key(profile: ProviderProfile) -> PoolKey:
    """What a pooled client is kept under: the profile's name and endpoint origin."""
    return (profile.name, endpoint_origin(profile.endpoint))


def offers_http2(origin: str) -> bool:
    """Whether a client for `origin` offers HTTP/2: over TLS only."""
    return origin.startswith("https://")


@dataclass(kw_only=True, slots=True)
class _Entry:
    client: httpx.AsyncClient
    busy: int = 0
    retired: bool = False


class ProviderPool:
    """One lazily made, long-lived HTTP client per provider profile."""

    def __init__(self, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self._transport = transport
        self._entries: dict[PoolKey, _Entry] = {}
        # Profiles whose server cannot stream a request with tools (stream_fallback.py).
        self._whole_answers = WholeAnswerMemory()
        self._tls: ssl.SSLContext | None = None
        self.facts = ModelFacts(self._lend, pool_key)
        self.gates = ModelGates()

    def model_for(
        self,
        profile: ProviderProfile,
        api_key: str | None,
        recorder: ExchangeRecorder | None = None,
        *,
        owner: str | None = None,
        on_queued: OnQueued | None = None,
    ) -> Model:
        """The profile's model; with a `recorder`, each raw exchange is reported to it.
        Its requests pass the profile's gate, as `owner`'s (`on_queued`: told when one
        has to wait)."""
        key = pool_key(profile)
        gate = self.gates.gate(key, profile.name, profile.max_parallel)
        return GatedModel(self._model(profile, api_key, recorder), gate, owner, on_queued)

    def _model(
        self, profile: ProviderProfile, api_key: str | None, recorder: ExchangeRecorder | None
    ) -> Model:
        key = pool_key(profile)

        def lend() -> contextlib.AbstractAsyncContextManager[httpx.AsyncClient]:
            return self._lend(key)

        if profile.type == "mlx":
            return LocalModel(profile, lend, api_key, recorder)
        return StreamOrWhole(
            OpenAIStreamingModel(profile, lend, api_key, recorder),
            LocalModel(profile, lend, api_key, recorder),
            memory=self._whole_answers,
            key=key,
            notice=fallback_notice(profile.name, profile.endpoint),
        )

    def client_for(self, profile: ProviderProfile) -> httpx.AsyncClient:
        return self._entry(pool_key(profile)).client

    @property
    def client_count(self) -> int:
        return len(self._entries)

    async def prune(self, keep: Iterable[PoolKey]) -> list[PoolKey]:
        """Retire every client whose key is not in `keep`; returns the retired keys."""
        wanted = set(keep)
        retired = [key for key in self._entries if key not in wanted]
        for key in retired:
            entry = self._entries.pop(key)
            entry.retired = True
            if entry.busy == 0:
                await entry.client.aclose()
        return retired

    async def aclose(self) -> None:
        """Close every client; the pool can be used again afterwards."""
        entries = list(self._entries.values())
        self._entries.clear()
        for entry in entries:
            await entry.client.aclose()

    def _entry(self, key: PoolKey) -> _Entry:
        entry = self._entries.get(key)
        if entry is None or entry.client.is_closed:
            client = httpx.AsyncClient(
                transport=self._transport,
                http2=offers_http2(key[1]),
                limits=POOL_LIMITS,
                timeout=STREAM_TIMEOUT,
                follow_redirects=False,
                verify=self._tls or True,
            )
            entry = self._entries[key] = _Entry(client=client)
        return entry

    @contextlib.asynccontextmanager
    async def _lend(self, key: PoolKey) -> AsyncIterator[httpx.AsyncClient]:
        if self._tls is None:  # built once, off the event loop (loading the CAs: ~40 ms)
            self._tls = await asyncio.to_thread(shared_tls)
        entry = self._entry(key)
        entry.busy += 1
        try:
            yield entry.client
        finally:
            entry.busy -= 1
            if entry.retired and entry.busy == 0:
                await entry.client.aclose()


@functools.cache
def shared_tls() -> ssl.SSLContext:
    """The TLS context every client of the pool verifies servers with (httpx's default:
    certifi's CAs, or SSL_CERT_FILE / SSL_CERT_DIR): made once, not per client. Run in
    a worker thread, it also brings in what a client first needs (HTTP/2 among it),
    which the event loop would otherwise import at the first model call."""
    context = httpx.create_ssl_context()
    httpx.AsyncClient(http2=True, verify=context)  # never used: nothing to close
    return context
