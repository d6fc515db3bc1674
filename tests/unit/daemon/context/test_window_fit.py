"""Which window a turn fits its prompt to, and the advice for one too small."""

from __future__ import annotations

from coding_harness.daemon.config.loader import Config
from coding_harness.daemon.config.profiles import ProviderProfile
from coding_harness.daemon.config.settings import AgentSettings
from coding_harness.daemon.context.window_fit import fit_window, raise_advice
from coding_harness.daemon.providers.window import NOTHING, ServerWindow

CONFIG = Config(providers={}, default_provider="local", agent=AgentSettings(), sources=())


def profile(window: int | None = None) -> ProviderProfile:
    return ProviderProfile(
        name="local",
        type="openai",
        endpoint="http://127.0.0.1:8080/v1/chat/completions",
        model="m",
        context_window=window,
    )


def test_the_servers_figure_wins_and_a_smaller_setting_caps_it() -> None:
    said = ServerWindow(tokens=8192, server="llama.cpp", source="llama.cpp /props n_ctx")
    assert fit_window(profile(), CONFIG, said).tokens == 8192
    capped = fit_window(profile(4096), CONFIG, said)
    assert capped.tokens == 4096 and "the server says 8,192" in capped.source
    assert fit_window(profile(65_536), CONFIG, said).tokens == 8192


def test_a_setting_stands_in_for_a_guessed_or_missing_figure() -> None:
    guessed = ServerWindow(tokens=4096, server="ollama", source="default", assumed=True)
    assert fit_window(profile(32_768), CONFIG, guessed).tokens == 32_768
    assert fit_window(profile(), CONFIG, guessed).tokens == 4096
    fallback = fit_window(profile(), CONFIG, NOTHING)
    assert fallback.tokens == CONFIG.agent.context_limit and not fallback.small


def test_a_window_under_16k_is_small_and_compacts_earlier() -> None:
    window = fit_window(profile(8192), CONFIG, NOTHING)
    assert window.small and window.compact_at(0.8) == 0.6


def test_the_advice_names_each_servers_own_setting() -> None:
    def advice(server: str, tokens: int) -> str | None:
        found = ServerWindow(tokens=tokens, server=server, source="s")
        return raise_advice(fit_window(profile(), CONFIG, found), profile())

    assert "OLLAMA_CONTEXT_LENGTH=16384" in str(advice("ollama", 2048))
    assert "llama-server with -c 16384" in str(advice("llama.cpp", 4096))
    assert "providers.local.context_window" in str(advice("", 4096))
    assert advice("llama.cpp", 8192) is None
