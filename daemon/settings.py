"""The `agent` and `search` sections of the configuration, parsed and checked.

`agent` holds the loop's and the session's limits; `search` which web search
engine the agent may use and whether it starts enabled. A bad value is
reported naming its file and key, and its default kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .providers.profiles import OriginOf, bad

SEARCH_ENGINES = ("brave", "exa", "duckduckgo")


@dataclass(frozen=True, kw_only=True, slots=True)
class AgentSettings:
    max_iterations: int = 20
    check_timeout: float = 600.0
    command_timeout: float = 120.0
    # Unchanged-workspace iterations before a turn stops; 0 turns the guard off.
    stall_limit: int = 8
    turn_token_budget: int | None = None
    session_token_budget: int | None = None
    # Seconds an approval may wait for an answer before it counts as "no".
    approval_timeout: float | None = None
    # Days after their last activity that sessions are deleted from the store.
    retention_days: float | None = 30.0
    fetch_private_urls: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class SearchSettings:
    engine: str = "duckduckgo"
    enabled: bool = False


_POSITIVE: dict[str, type] = {
    "max_iterations": int,
    "check_timeout": float,
    "command_timeout": float,
    "turn_token_budget": int,
    "session_token_budget": int,
    "approval_timeout": float,
    "retention_days": float,
}


def parse_agent(raw: Any, origin_of: OriginOf, problems: list[str]) -> AgentSettings:
    if raw is None:
        return AgentSettings()
    if not isinstance(raw, Mapping):
        problems.append(f"{bad(origin_of, ('agent',), 'must be an object')}; defaults were kept")
        return AgentSettings()
    values: dict[str, Any] = {}
    for key, value in raw.items():
        parsed = _agent_value(key, value)
        if parsed is _INVALID:
            problems.append(
                f"{bad(origin_of, ('agent', key), _RULES.get(key, 'is not a setting'))}"
                "; the default was kept"
            )
        else:
            values[key] = parsed
    return AgentSettings(**values)


_INVALID = object()
_RULES = dict.fromkeys(_POSITIVE, "must be a positive number") | {
    "stall_limit": "must be a whole number (0 turns the guard off)",
    "fetch_private_urls": "must be true or false",
}


def _agent_value(key: str, value: Any) -> Any:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if key in _POSITIVE:
        if value is None and key not in ("max_iterations", "check_timeout", "command_timeout"):
            return None
        return _POSITIVE[key](value) if number and value > 0 else _INVALID
    if key == "stall_limit":
        return int(value) if number and value >= 0 else _INVALID
    if key == "fetch_private_urls":
        return value if isinstance(value, bool) else _INVALID
    return _INVALID


def parse_search(raw: Any, origin_of: OriginOf, problems: list[str]) -> SearchSettings:
    if not isinstance(raw, Mapping):
        return SearchSettings()  # a non-object is reported with the other flags
    engine = str(raw.get("engine", "duckduckgo")).lower()
    engine = "duckduckgo" if engine == "ddg" else engine
    if engine not in SEARCH_ENGINES:
        where = bad(origin_of, ("search", "engine"), f"must be one of {', '.join(SEARCH_ENGINES)}")
        problems.append(f"{where}; duckduckgo is used")
        engine = "duckduckgo"
    enabled = raw.get("enabled", False)
    if not isinstance(enabled, bool):
        problems.append(f"{bad(origin_of, ('search', 'enabled'), 'must be true or false')}")
        enabled = False
    return SearchSettings(engine=engine, enabled=enabled)
