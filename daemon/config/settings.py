"""The `agent` and `search` sections of the configuration, parsed and checked.

`agent` holds the loop's and the session's limits and the permission mode new
sessions start in; `search` which web search
engine the agent may use and whether it starts enabled. A bad value is
reported naming its file and key, and its default kept.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from coding_harness.daemon.config.profiles import OriginOf, bad
from coding_harness.protocol.modes import DEFAULT_MODE, PERMISSION_MODES, mode_named

# Re-exported for daemon/methods/session_methods.py; the names live in protocol/vocabulary.py.
from coding_harness.protocol.vocabulary import (
    DEFAULT_SEARCH_ENGINE,
    SEARCH_ENGINES,
    search_engine_named,
)

_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
CLASSIFY_MODES = ("keywords", "model", "off")


SANDBOX_MODES = ("auto", "required", "off")


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
    # USD a session, and all sessions in a local calendar day, may spend; None: no limit.
    spend_limit_session_usd: float | None = None
    spend_limit_day_usd: float | None = None
    # Intent routing: "keywords" (clear cases by keyword, the rest to coding),
    # "model" (ambiguous text asks the model for one word), "off" (always coding).
    classify: str = "keywords"
    # Estimated tokens the provider's context holds; compaction starts at `compact_at` of it.
    context_limit: int = 32_000
    context_limits: Mapping[str, int] = field(default_factory=dict)  # per provider profile
    compact_at: float = 0.8
    # Local services the model must not serve on: (name, address) pairs.
    services: tuple[tuple[str, str], ...] = ()
    # Also tell the model which local ports are listening right now.
    list_ports: bool = True
    # Variables tool commands get besides the built-in allow-list (never a secret's).
    env_pass: tuple[str, ...] = ()
    # The permission mode of a new session (`protocol/modes.py`); a turn's own config
    # carries its session's mode here.
    mode: str = DEFAULT_MODE
    # run_shell and make check inside a sandbox: "auto" (when the machine has one),
    # "required" (refuse commands without one), "off" (docs/security.md).
    sandbox: str = "auto"
    # Whether sandboxed commands may use the network.
    sandbox_network: bool = False
    # Folders under the home folder (`~/x` or absolute) the sandbox shows read-only
    # besides its built-in toolchain folders; only the global file may set it.
    sandbox_home: tuple[str, ...] = ()
    # Estimated tokens of the repo map in a coding turn's system prompt; 0: no map.
    repo_map_tokens: int = 1024
    # The check after an applied edit: a shell line or an argv; None: the project's own
    # is found (tools/edit/check_command.py). A project file sets it only once trusted.
    check_command: str | tuple[str, ...] | None = None
    # The allow-list every session starts with (`/allow-cmd ... --save` writes it):
    # `git log`, `cargo`, `uv run`, `make lint`, `mcp__SERVER__TOOL`; global file only.
    allow_commands: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class SearchSettings:
    engine: str = DEFAULT_SEARCH_ENGINE
    enabled: bool = False


_POSITIVE: dict[str, type] = {
    "max_iterations": int,
    "check_timeout": float,
    "command_timeout": float,
    "turn_token_budget": int,
    "session_token_budget": int,
    "approval_timeout": float,
    "retention_days": float,
    "spend_limit_session_usd": float,
    "spend_limit_day_usd": float,
    "context_limit": int,
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
    "repo_map_tokens": "must be a whole number of tokens (0 turns the repo map off)",
    "fetch_private_urls": "must be true or false",
    "list_ports": "must be true or false",
    "classify": f"must be one of {', '.join(CLASSIFY_MODES)}",
    "compact_at": "must be a fraction between 0.1 and 1",
    "context_limits": "must map provider names to positive whole numbers of tokens",
    "services": 'must be a list of {"name": ..., "port": N} or {"name": ..., "url": ...}',
    "env_pass": "must be a list of environment variable names",
    "mode": f"must be one of {', '.join(PERMISSION_MODES)}",
    "sandbox": f"must be one of {', '.join(SANDBOX_MODES)}",
    "sandbox_network": "must be true or false",
    "check_command": "must be a command line, or a list of the program and its arguments",
    "sandbox_home": 'must be a list of folders in your home folder, as "~/name" or "/absolute"',
    "allow_commands": 'must be a list of commands, as "git log", "cargo" or "uv run"',
}


def _agent_value(key: str, value: Any) -> Any:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if key in _POSITIVE:
        if value is None and key not in ("max_iterations", "check_timeout", "command_timeout"):
            return None
        return _POSITIVE[key](value) if number and value > 0 else _INVALID
    if key == "stall_limit":
        return int(value) if number and value >= 0 else _INVALID
    if key == "repo_map_tokens":
        return (
            value
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0
            else _INVALID
        )
    if key == "sandbox":
        return value if value in SANDBOX_MODES else _INVALID
    if key in ("fetch_private_urls", "list_ports", "sandbox_network"):
        return value if isinstance(value, bool) else _INVALID
    if key == "classify":
        return value if value in CLASSIFY_MODES else _INVALID
    if key == "compact_at":
        return float(value) if number and 0.1 <= value <= 1 else _INVALID
    if key == "context_limits":
        return _limits(value)
    if key == "services":
        return _services(value)
    if key == "env_pass":
        return _variable_names(value)
    if key == "sandbox_home":
        return _home_folders(value)
    if key == "check_command":
        return _command(value)
    if key == "allow_commands":
        good = isinstance(value, list) and all(
            isinstance(entry, str) and 1 <= len(entry.split()) <= 2 for entry in value
        )
        return tuple(" ".join(entry.split()) for entry in value) if good else _INVALID
    if key == "mode":
        return mode_named(value) or _INVALID
    return _INVALID


def _variable_names(value: Any) -> Any:
    if not isinstance(value, list):
        return _INVALID
    if not all(isinstance(name, str) and _VARIABLE_NAME.fullmatch(name) for name in value):
        return _INVALID
    return tuple(value)


def _command(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, str):
        return value.strip() or _INVALID
    if isinstance(value, list) and value and all(isinstance(a, str) and a for a in value):
        return tuple(value)
    return _INVALID


def _home_folders(value: Any) -> Any:
    if not isinstance(value, list):
        return _INVALID
    good = all(isinstance(p, str) and p.startswith(("~/", "/")) and p.strip("~/") for p in value)
    return tuple(value) if good else _INVALID


def _limits(value: Any) -> Any:
    if not isinstance(value, Mapping):
        return _INVALID
    good = all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value.values())
    return {str(k): int(v) for k, v in value.items()} if good else _INVALID


def _services(value: Any) -> Any:
    if not isinstance(value, list):
        return _INVALID
    found: list[tuple[str, str]] = []
    for entry in value:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
            return _INVALID
        port, url = entry.get("port"), entry.get("url")
        if isinstance(port, int) and not isinstance(port, bool) and 0 < port < 65536:
            found.append((entry["name"], f"localhost:{port}"))
        elif isinstance(url, str) and url:
            found.append((entry["name"], url))
        else:
            return _INVALID
    return tuple(found)


def parse_search(raw: Any, origin_of: OriginOf, problems: list[str]) -> SearchSettings:
    if not isinstance(raw, Mapping):
        return SearchSettings()  # a non-object is reported with the other flags
    engine = search_engine_named(str(raw.get("engine", DEFAULT_SEARCH_ENGINE)))
    if engine is None:
        where = bad(origin_of, ("search", "engine"), f"must be one of {', '.join(SEARCH_ENGINES)}")
        problems.append(f"{where}; {DEFAULT_SEARCH_ENGINE} is used")
        engine = DEFAULT_SEARCH_ENGINE
    enabled = raw.get("enabled", True)  # a `search` section turns search on unless it says not
    if not isinstance(enabled, bool):
        problems.append(f"{bad(origin_of, ('search', 'enabled'), 'must be true or false')}")
        enabled = False
    return SearchSettings(engine=engine, enabled=enabled)
