"""What both provider clients share: a profile, a pooled client and a key."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

import httpx

from coding_harness.daemon.config import ProviderProfile

# Lends an HTTP client for the length of one request (see `ProviderPool`).
ClientLender = Callable[[], AbstractAsyncContextManager[httpx.AsyncClient]]


class ProfileModel:
    """Base of the concrete `Model`s: holds the profile, HTTP client and API key.

    `client` is either a client, used as it is, or a lender that hands one out
    per request, so the pool can retire a client once no request uses it.
    """

    def __init__(
        self,
        profile: ProviderProfile,
        client: httpx.AsyncClient | ClientLender,
        api_key: str | None,
    ) -> None:
        self._profile = profile
        self._client = client
        self._api_key = api_key

    @property
    def label(self) -> str:
        return f"{self._profile.name}:{self._profile.model}"

    def _borrow(self) -> AbstractAsyncContextManager[httpx.AsyncClient]:
        if isinstance(self._client, httpx.AsyncClient):
            return contextlib.nullcontext(self._client)
        return self._client()
