"""What both provider clients share: a profile, a pooled client and a key."""

from __future__ import annotations

import httpx

from coding_harness.daemon.config import ProviderProfile


class ProfileModel:
    """Base of the concrete `Model`s: holds the profile, HTTP client and API key."""

    def __init__(
        self, profile: ProviderProfile, client: httpx.AsyncClient, api_key: str | None
    ) -> None:
        self._profile = profile
        self._client = client
        self._api_key = api_key

    @property
    def label(self) -> str:
        return f"{self._profile.name}:{self._profile.model}"
