"""Words both sides must spell alike: routes, search engines, the built-in provider.

A client offers them (completion, `/intent`, `/search`, colours, `harness
doctor`) and the daemon checks them (options, configuration), so each is
written here once.
"""

from __future__ import annotations

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final, Literal, TypeAlias

    Route: TypeAlias = Literal["general", "coding", "hybrid"]
    """Where a request goes: answered directly, the tool loop, or the loop with web results."""

    SearchEngineName: TypeAlias = Literal["brave", "exa", "duckduckgo"]
else:
    Route = SearchEngineName = str  # at run time a route or an engine is a plain string

ROUTES: Final[tuple[Route, ...]] = ("general", "coding", "hybrid")

SEARCH_ENGINES: Final[tuple[SearchEngineName, ...]] = ("brave", "exa", "duckduckgo")
DEFAULT_SEARCH_ENGINE: Final[SearchEngineName] = "duckduckgo"
SEARCH_ENGINE_ALIASES: Final = {"ddg": "duckduckgo"}  # accepted, and read as the engine
SEARCH_OFF: Final = "off"  # what a client sends to turn search off

# The provider profile that exists without any configuration, and where it sends
# requests (Ollama's port) unless the configuration says otherwise.
BUILTIN_PROVIDER: Final = "local"
LOCAL_ENDPOINT: Final = "http://localhost:11434/v1/chat/completions"


def search_engine_named(word: str) -> SearchEngineName | None:
    """`word` (any case, `ddg` included) as an engine's name, or None when it names none."""
    chosen = word.lower()
    chosen = SEARCH_ENGINE_ALIASES.get(chosen, chosen)
    return next((engine for engine in SEARCH_ENGINES if engine == chosen), None)
