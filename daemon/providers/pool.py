"""Warm HTTP connections to the providers, shared by every session of the daemon.

`ProviderPool` keeps one `httpx.AsyncClient` per provider profile (its name and
the origin of its endpoint), made on first use and reused across turns,
sessions and clients, so a second request skips the TCP and TLS handshakes.
`model_for` hands out the `Model` for a profile's type over that client. Tests
pass an `httpx.MockTransport` as `transport`.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx

from coding_harness.daemon.config import ProviderProfile
from coding_harness.daemon.providers.local_model import LocalModel
from coding_harness.daemon.providers.openai_stream import STREAM_TIMEOUT, OpenAIStreamingModel
from coding_harness.daemon.seams import Model

POOL_LIMITS = httpx.Limits(max_connections=32, max_keepalive_connections=8, keepalive_expiry=120.0)


def endpoint_origin(endpoint: str) -> str:
    """scheme://host:port of a URL, lower-cased, for keying connections."""
    parts = urlsplit(endpoint)
    return f"{parts.scheme}://{parts.netloc}".lower()


class ProviderPool:
    """One lazily made, long-lived HTTP client per provider profile."""

    def __init__(self, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self._transport = transport
        self._clients: dict[tuple[str, str], httpx.AsyncClient] = {}

    def model_for(self, profile: ProviderProfile, api_key: str | None) -> Model:
        client = self.client_for(profile)
        if profile.type == "mlx":
            return LocalModel(profile, client, api_key)
        return OpenAIStreamingModel(profile, client, api_key)

    def client_for(self, profile: ProviderProfile) -> httpx.AsyncClient:
        key = (profile.name, endpoint_origin(profile.endpoint))
        client = self._clients.get(key)
        if client is None or client.is_closed:
            client = httpx.AsyncClient(
                transport=self._transport,
                limits=POOL_LIMITS,
                timeout=STREAM_TIMEOUT,
                follow_redirects=False,
            )
            self._clients[key] = client
        return client

    @property
    def client_count(self) -> int:
        return len(self._clients)

    async def aclose(self) -> None:
        """Close every client; the pool can be used again afterwards."""
        clients = list(self._clients.values())
        self._clients.clear()
        for client in clients:
            await client.aclose()
