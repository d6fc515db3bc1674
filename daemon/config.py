"""Configuration: the files, their deep merge, and the typed profiles.

Layers, lowest first: the built-in local profile, `~/.coding_harness.json`,
then the project's `.local_coding_harness.json` merged over it key by key.
`ConfigCache` keeps what was loaded and reloads only when a file's size,
mtime_ns or inode changed, so a user who edits a config sees it on the next
command without paying for a parse on every call.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

log = logging.getLogger(__name__)

GLOBAL_CONFIG_NAME = ".coding_harness.json"
PROJECT_CONFIG_NAME = ".local_coding_harness.json"
LOCAL_ENDPOINT = "http://localhost:11434/v1/chat/completions"
BUILTIN_PROVIDER = "local"
BUILTIN_MODEL = "qwen2.5-coder"

ProviderType = Literal["openai", "mlx"]
_TYPE_ALIASES: dict[str, ProviderType] = {
    "openai": "openai",
    "mlx": "mlx",
    "ollama": "mlx",
    "omlx": "mlx",
    "sushi": "mlx",
}


class ConfigError(Exception):
    """A setting that cannot be used; the message names the file and key."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ProviderProfile:
    name: str
    type: ProviderType
    endpoint: str
    model: str
    api_key_env: str | None = None
    generation: Mapping[str, Any] = field(default_factory=dict)
    pricing: Mapping[str, float] | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class AgentSettings:
    max_iterations: int = 20
    check_timeout: float = 600.0
    command_timeout: float = 120.0


@dataclass(frozen=True, kw_only=True, slots=True)
class Config:
    providers: Mapping[str, ProviderProfile]
    default_provider: str
    agent: AgentSettings
    sources: tuple[str, ...]
    problems: tuple[str, ...] = ()
    builtin: bool = False

    def profile(self, name: str | None) -> ProviderProfile:
        chosen = name or self.default_provider
        try:
            return self.providers[chosen]
        except KeyError:
            known = ", ".join(sorted(self.providers)) or "none"
            raise ConfigError(
                f"unknown provider {chosen!r} (configured: {known}); "
                f'add it under "providers" in ~/{GLOBAL_CONFIG_NAME}'
            ) from None

    def key_env_names(self) -> list[str]:
        return sorted({p.api_key_env for p in self.providers.values() if p.api_key_env})


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """`over` merged onto `base`: objects merge key by key, anything else replaces."""
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def config_paths(home: Path, cwd: Path) -> list[Path]:
    return [home / GLOBAL_CONFIG_NAME, cwd / PROJECT_CONFIG_NAME]


def _read_layer(path: Path, problems: list[str]) -> dict[str, Any] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        problems.append(f"{path}: cannot read ({exc.strerror})")
        return None
    try:
        data = json.loads(text)
    except ValueError as exc:
        problems.append(f"{path}: not valid JSON ({exc}); it was ignored")
        return None
    if not isinstance(data, dict):
        problems.append(f"{path}: the top level must be a JSON object; it was ignored")
        return None
    return data


def _builtin_profile() -> ProviderProfile:
    return ProviderProfile(
        name=BUILTIN_PROVIDER, type="openai", endpoint=LOCAL_ENDPOINT, model=BUILTIN_MODEL
    )


def _profile(name: str, raw: Any, origin: str) -> ProviderProfile:
    where = f"{origin}: providers.{name}"
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where} must be an object")
    kind = _TYPE_ALIASES.get(str(raw.get("type", "openai")).lower())
    if kind is None:
        raise ConfigError(f"{where}.type {raw.get('type')!r} is not one of {sorted(_TYPE_ALIASES)}")
    endpoint, model = raw.get("endpoint"), raw.get("model")
    if not isinstance(endpoint, str) or not endpoint.startswith(("http://", "https://")):
        raise ConfigError(f"{where}.endpoint must be an http(s) URL")
    if not isinstance(model, str) or not model:
        raise ConfigError(f"{where}.model must be a non-empty string")
    key_env = raw.get("api_key_env")
    if key_env is not None and not isinstance(key_env, str):
        raise ConfigError(f"{where}.api_key_env must be the name of an environment variable")
    generation = raw.get("generation") or {}
    if not isinstance(generation, Mapping):
        raise ConfigError(f"{where}.generation must be an object")
    pricing = raw.get("pricing")
    if pricing is not None and not (
        isinstance(pricing, Mapping) and all(isinstance(v, int | float) for v in pricing.values())
    ):
        raise ConfigError(f"{where}.pricing must map names to numbers (USD per 1M tokens)")
    return ProviderProfile(
        name=name,
        type=kind,
        endpoint=endpoint,
        model=model,
        api_key_env=key_env or None,
        generation=dict(generation),
        pricing=dict(pricing) if pricing is not None else None,
    )


def _agent_settings(raw: Any, problems: list[str]) -> AgentSettings:
    if not isinstance(raw, Mapping):
        return AgentSettings()
    values: dict[str, Any] = {}
    for key, kind in (
        ("max_iterations", int),
        ("check_timeout", float),
        ("command_timeout", float),
    ):
        if key in raw:
            value = raw[key]
            if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
                values[key] = kind(value)
            else:
                problems.append(f"agent.{key} must be a positive number; the default was kept")
    return AgentSettings(**values)


def load_config(home: Path, cwd: Path) -> Config:
    """Read, merge and validate the layers for a workspace. Never raises.

    The built-in local profile is used only when no file declares a provider.
    """
    problems: list[str] = []
    merged: dict[str, Any] = {}
    sources: list[str] = []
    for path in config_paths(home, cwd):
        layer = _read_layer(path, problems)
        if layer is not None:
            sources.append(str(path))
            merged = deep_merge(merged, layer)
    providers: dict[str, ProviderProfile] = {}
    raw_providers = merged.get("providers")
    if raw_providers is not None and not isinstance(raw_providers, Mapping):
        problems.append("providers must be an object mapping names to profiles")
        raw_providers = None
    for name, raw in (raw_providers or {}).items():
        try:
            providers[name] = _profile(name, raw, "config")
        except ConfigError as exc:
            problems.append(f"{exc}; this provider was skipped")
    builtin = not providers
    if builtin:
        providers = {BUILTIN_PROVIDER: _builtin_profile()}
    default = merged.get("default_provider")
    if not isinstance(default, str) or default not in providers:
        if default is not None:
            problems.append(f"default_provider {default!r} is not a configured provider")
        default = sorted(providers)[0]
    return Config(
        providers=providers,
        default_provider=default,
        agent=_agent_settings(merged.get("agent"), problems),
        sources=tuple(sources),
        problems=tuple(problems),
        builtin=builtin,
    )


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_size, info.st_mtime_ns, info.st_ino)


class ConfigCache:
    """Loaded configs per workspace, reloaded when a file's stat changes."""

    def __init__(self, home: Path) -> None:
        self._home = home
        self._entries: dict[Path, tuple[tuple[Any, ...], Config]] = {}

    def get(self, cwd: Path) -> Config:
        paths = config_paths(self._home, cwd)
        signature = tuple(_signature(p) for p in paths)
        cached = self._entries.get(cwd)
        if cached is not None and cached[0] == signature:
            return cached[1]
        config = load_config(self._home, cwd)
        for problem in config.problems:
            log.warning("config: %s", problem)
        self._entries[cwd] = (signature, config)
        return config

    def clear(self) -> None:
        self._entries.clear()


def home_dir() -> Path:
    return Path(os.environ.get("HOME") or Path.home())
