"""What both provider clients share: a profile, a pooled client, a key, and
the optional recorder of raw exchanges (`exchanges.py`, for `--debug`)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager

import httpx

from coding_harness.daemon.agent.seams import JSONObject
from coding_harness.daemon.config.profiles import ProviderProfile
from coding_harness.daemon.providers.exchanges import Exchange, ExchangeRecorder
from coding_harness.daemon.providers.stall import StallWatch

# Lends an HTTP client for the length of one request (see `ProviderPool`).
ClientLender = Callable[[], AbstractAsyncContextManager[httpx.AsyncClient]]


class ProfileModel:
    """Base of the concrete `Model`s: holds the profile, HTTP client and API key.

    `client` is either a client, used as it is, or a lender that hands one out
    per request, so the pool can retire a client once no request uses it.
    With a `recorder`, every request and its response are reported to it.
    """

    def __init__(
        self,
        profile: ProviderProfile,
        client: httpx.AsyncClient | ClientLender,
        api_key: str | None,
        recorder: ExchangeRecorder | None = None,
    ) -> None:
        self._profile = profile
        self._client = client
        self._api_key = api_key
        self._recorder = recorder

    @property
    def label(self) -> str:
        return f"{self._profile.name}:{self._profile.model}"

    def _borrow(self) -> AbstractAsyncContextManager[httpx.AsyncClient]:
        if isinstance(self._client, httpx.AsyncClient):
            return contextlib.nullcontext(self._client)
        return self._client()

    @contextlib.asynccontextmanager
    async def _recorded(
        self, headers: dict[str, str], body: JSONObject
    ) -> AsyncIterator[Exchange | None]:
        """The record of one request (None without a recorder); ended however it ends."""
        if self._recorder is None:
            yield None
            return
        exchange = Exchange(
            self._recorder, endpoint=self._profile.endpoint, headers=headers, body=body
        )
        try:
            yield exchange
        except BaseException as exc:
            exchange.finish(exc)
            raise
        exchange.finish()


def watch_response(exchange: Exchange | None, watch: StallWatch, response: httpx.Response) -> None:
    """Let the exchange see the response's status and each piece of its body."""
    if exchange is not None:
        exchange.answered(response.status_code)
        watch.tap = exchange.piece
