"""What the daemon learns about each model server while it runs: its window, whether the
model takes tools, and which of the server's models do.

`ModelFacts.window` asks the server (`window.py`) through the pool's warm client
and keeps the answer for a while: a figure the server stated for
`CONFIRMED_SECONDS` (a server restarted with another `-c` is seen again within
a minute), a guess or no answer for `GUESSED_SECONDS` only (an Ollama model not
loaded yet tells its window once loaded). All of one look-up takes at most
`PROBE_SECONDS`. `no_tools` remembers the profiles whose model answered "does
not support tools"; `tool_models` names the models of an Ollama server whose
`capabilities` include "tools".
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import httpx

from coding_harness.daemon.config.profiles import ProviderProfile
from coding_harness.daemon.providers.window import (
    NOTHING,
    Asker,
    ServerWindow,
    is_loopback,
    origin_of,
    probe_window,
    same_model,
)

PoolKey = tuple[str, str]
Lender = Callable[[PoolKey], AbstractAsyncContextManager[httpx.AsyncClient]]
KeyOf = Callable[[ProviderProfile], PoolKey]

CONFIRMED_SECONDS = 60.0
GUESSED_SECONDS = 5.0
PROBE_SECONDS = 4.0
TOOL_MODELS_ASKED = 12


class ModelFacts:
    def __init__(self, lend: Lender, key_of: KeyOf) -> None:
        self._lend = lend
        self._key_of = key_of
        self._windows: dict[tuple[PoolKey, str], tuple[float, ServerWindow]] = {}
        self._no_tools: set[tuple[PoolKey, str]] = set()

    async def window(self, profile: ProviderProfile, api_key: str | None) -> ServerWindow:
        """What the profile's server says about its model's window (cached)."""
        key = (self._key_of(profile), profile.model)
        kept = self._windows.get(key)
        now = time.monotonic()
        if kept is not None and kept[0] > now:
            return kept[1]
        try:
            async with asyncio.timeout(PROBE_SECONDS), self._lend(key[0]) as client:
                found = await probe_window(client, profile.endpoint, profile.model, api_key)
        except TimeoutError:
            found = NOTHING
        stated = found.tokens is not None and not found.assumed
        self._windows[key] = (now + (CONFIRMED_SECONDS if stated else GUESSED_SECONDS), found)
        return found

    def forget_window(self, profile: ProviderProfile) -> None:
        """Ask again next time (the server said the prompt did not fit)."""
        self._windows.pop((self._key_of(profile), profile.model), None)

    def no_tools(self, profile: ProviderProfile) -> bool:
        """Whether the profile's model refused tools (or the profile says `tools: false`)."""
        return not profile.tools or (self._key_of(profile), profile.model) in self._no_tools

    def remember_no_tools(self, profile: ProviderProfile) -> None:
        self._no_tools.add((self._key_of(profile), profile.model))

    async def tool_models(self, profile: ProviderProfile, api_key: str | None) -> list[str]:
        """Models of the profile's server that take tools, as far as it tells (Ollama's
        `capabilities`); empty when it does not."""
        if not is_loopback(profile.endpoint):
            return []
        try:
            async with asyncio.timeout(PROBE_SECONDS), self._lend(self._key_of(profile)) as client:
                return await _ollama_tool_models(client, profile, api_key)
        except TimeoutError:
            return []


async def _ollama_tool_models(
    client: httpx.AsyncClient, profile: ProviderProfile, api_key: str | None
) -> list[str]:
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    ask = Asker(client, headers)
    origin = origin_of(profile.endpoint)
    listing: Any = await ask.get(f"{origin}/api/tags")
    models = listing.get("models") if isinstance(listing, dict) else None
    names = [
        str(m.get("name") or m.get("model"))
        for m in models or []
        if isinstance(m, dict) and (m.get("name") or m.get("model"))
    ]
    found: list[str] = []
    for name in [n for n in names if not same_model(n, profile.model)][:TOOL_MODELS_ASKED]:
        shown = await ask.post(f"{origin}/api/show", {"model": name})
        capabilities = shown.get("capabilities") if isinstance(shown, dict) else None
        if isinstance(capabilities, list) and "tools" in capabilities:
            found.append(name)
    return found
