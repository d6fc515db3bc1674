"""The window a turn fits its prompt to, where that figure came from, and the advice
when it is too small to be useful.

The server's own figure (`providers/window.py`) wins: it is what the server
will cut at. A profile's `context_window` caps it (and stands in for a server
that cannot say, or for Ollama's default, which the harness can only guess);
without either, `agent.context_limits[profile]`, then `agent.context_limit`.
A window of `SMALL_WINDOW` tokens or less gets the small-window budget
(`turns/small_window.py`); one under `USEFUL_WINDOW` also gets one notice per
session saying how to raise it on that server. A prompt that alone passes the
window is refused before any model call (`refuse_oversized`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from coding_harness.daemon.config.loader import Config
from coding_harness.daemon.config.profiles import ProviderProfile
from coding_harness.daemon.providers.model_facts import ModelFacts
from coding_harness.daemon.providers.window import ServerWindow

SMALL_WINDOW = 16_384
USEFUL_WINDOW = 8_192
SMALL_COMPACT_AT = 0.6  # a small window compacts earlier: the reply needs room too


class PromptTooLarge(Exception):
    """A prompt larger than the model's whole window: refused before any model call,
    and not kept in the conversation. The message is for the person."""


@dataclass(frozen=True, kw_only=True, slots=True)
class TurnWindow:
    tokens: int
    source: str
    server: str = ""
    assumed: bool = False

    @property
    def small(self) -> bool:
        return self.tokens <= SMALL_WINDOW

    def compact_at(self, configured: float) -> float:
        return min(configured, SMALL_COMPACT_AT) if self.small else configured

    def to_wire(self) -> dict[str, Any]:
        return {
            "tokens": self.tokens,
            "source": self.source,
            "server": self.server,
            "small": self.small,
            "assumed": self.assumed,
        }


def fit_window(profile: ProviderProfile, config: Config, found: ServerWindow) -> TurnWindow:
    """The window of `profile`'s next request, from what its server said and the config."""
    own = profile.context_window
    where = f"providers.{profile.name}.context_window"
    if found.tokens is not None and not found.assumed:
        if own is not None and own < found.tokens:
            return TurnWindow(tokens=own, source=f"{where}; the server says {found.tokens:,}")
        return TurnWindow(tokens=found.tokens, source=found.source, server=found.server)
    if own is not None:
        return TurnWindow(tokens=own, source=where, server=found.server)
    if found.tokens is not None:
        return TurnWindow(
            tokens=found.tokens, source=found.source, server=found.server, assumed=True
        )
    limits = config.agent.context_limits
    if profile.name in limits:
        return TurnWindow(
            tokens=limits[profile.name], source=f"agent.context_limits.{profile.name}"
        )
    return TurnWindow(
        tokens=config.agent.context_limit,
        source="agent.context_limit; the server does not say",
    )


def raise_advice(window: TurnWindow, profile: ProviderProfile) -> str | None:
    """One line when `window` is too small for a useful coding turn: how to raise it."""
    if window.tokens >= USEFUL_WINDOW:
        return None
    want = 16_384
    head = (
        f"the model's context window is {window.tokens:,} tokens ({window.source}): too "
        f"small for a coding turn, whose requests soon pass {USEFUL_WINDOW:,}; "
    )
    setting = f"providers.{profile.name}.context_window"
    how = {
        "ollama": (
            f"restart Ollama with OLLAMA_CONTEXT_LENGTH={want} (or PARAMETER num_ctx {want} "
            f"in a Modelfile); if it has that already, set {setting}"
        ),
        "llama.cpp": f"restart llama-server with -c {want} (divided among --parallel slots)",
        "lmstudio": f"load the model again with a context length of {want} or more",
    }.get(window.server, f"raise the server's context size, then set {setting} to it")
    return head + how


async def window_for(
    facts: ModelFacts, profile: ProviderProfile, config: Config, api_key: str | None
) -> TurnWindow:
    """Ask the profile's server (cached, `model_facts.py`) and fit its answer."""
    return fit_window(profile, config, await facts.window(profile, api_key))


def refuse_oversized(text: str, window: TurnWindow) -> None:
    """`PromptTooLarge` when `text` alone (about four characters a token) passes the window."""
    estimate = (len(text) + 3) // 4
    if estimate <= window.tokens:
        return
    raise PromptTooLarge(
        f"the prompt is about {estimate:,} tokens, more than the model's whole context "
        f"window of {window.tokens:,} ({window.source}), so it was not sent to the model "
        "and is not kept in the conversation; attach large files by path (the agent reads "
        "them with its tools), or send a shorter prompt"
    )
