"""Configuration: the layers, their one merge, one validation, and the cache.

Layers, lowest first, each deep-merged over the ones below key by key:

1. built-in defaults: the `local` profile, only when no file declares a provider;
   with no file at all, what first-run discovery found lies over it
   (`provider_discovery`, `ConfigCache.found`): the local servers answering and the
   usual key variables set, the first of them the default;
2. `~/.coding_harness.json`;
3. the project's `.local_coding_harness.json`: until the user trusts it with
   `harness trust`, only the keys `protocol.trust.SAFE_KEYS` allows, and only
   for providers the user's own files declare;
4. the legacy `~/.config/coding-agent/config.json`, in the harness shape or
   the flat one of the Swift port (`provider`, `model`).

Environment and flags belong to the client's shell: it sends
CODING_AGENT_PROVIDER / CODING_AGENT_MODEL and --provider / --model as the
session's provider and model, which win over all of the above.
`ConfigCache` reloads a workspace's config when a file's size, mtime_ns or
inode changed, and shows each problem once until something changes.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from coding_harness.daemon.config.hook_settings import HookSettings, parse_hooks
from coding_harness.daemon.config.hub_settings import HubSettings, parse_hub
from coding_harness.daemon.config.layers import (
    BUILTIN_ORIGIN,
    DISCOVERED_ORIGIN,
    assemble,
    builtin_layer,
    config_paths,
    discovered_layer,
    fallback_default,
    merged_data,
    origin_finder,
)
from coding_harness.daemon.config.mcp_settings import McpServerSpec
from coding_harness.daemon.config.mcp_sources import configured_servers
from coding_harness.daemon.config.notify_settings import NotifySettings, parse_notify
from coding_harness.daemon.config.profiles import (
    ConfigError,
    OriginOf,
    ProviderProfile,
    RetrySettings,
    bad,
    parse_profile,
    parse_retry,
)
from coding_harness.daemon.config.settings import (
    AgentSettings,
    SearchSettings,
    parse_agent,
    parse_search,
)
from coding_harness.protocol import paths, trust
from coding_harness.protocol.config_files import (
    DISCOVERY_KEY_VARIABLES,
    GLOBAL_CONFIG_NAME,
    MCP_CONFIG_NAME,
    SEARCH_KEY_VARIABLES,
)
from coding_harness.protocol.vocabulary import BUILTIN_PROVIDER

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True, slots=True)
class Config:
    providers: Mapping[str, ProviderProfile]
    default_provider: str
    agent: AgentSettings
    search: SearchSettings = field(default_factory=SearchSettings)
    notify: NotifySettings = field(default_factory=NotifySettings)
    # The team's PostgreSQL hub (global file only); None: this machine alone.
    hub: HubSettings | None = None
    hooks: HookSettings = field(default_factory=HookSettings)  # every file's, in order
    sources: tuple[str, ...]
    problems: tuple[str, ...] = ()
    builtin: bool = False
    retry: RetrySettings = field(default_factory=RetrySettings)
    untrusted: tuple[str, ...] = ()
    # The MCP servers this folder's sessions may use, by name (`mcp_sources.py`).
    mcp_servers: Mapping[str, McpServerSpec] = field(default_factory=dict)
    # The default profile's name when first-run discovery chose it.
    discovered: str | None = None

    @property
    def discoverable(self) -> bool:
        """No config file at all: first-run discovery may offer what it finds."""
        return self.builtin and not self.sources

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
        """The variables a client sends with each create and submit: every profile's key,
        the MCP servers' bearer tokens and the web search keys, so a key exported in a
        new shell is used at once; with no config file, the usual key variables
        discovery looks for too."""
        profiles = {p.api_key_env for p in self.providers.values() if p.api_key_env}
        usual = set(DISCOVERY_KEY_VARIABLES) if self.discoverable else set()
        tokens = {s.bearer_token_env for s in self.mcp_servers.values() if s.bearer_token_env}
        return sorted(profiles | usual | tokens | set(SEARCH_KEY_VARIABLES))


class Found(Protocol):
    """What first-run discovery found, as the config takes it (providers/discovery.py
    makes it; config never imports providers)."""

    @property
    def chosen(self) -> str | None: ...

    def profiles(self) -> dict[str, dict[str, Any]]: ...


def with_discovery(config: Config, found: Found | None) -> Config:
    """`config` with what discovery found as profiles, the first one the default; the
    same config when there is a config file or nothing was found."""
    chosen = found.chosen if found is not None else None
    if found is None or chosen is None or not config.discoverable:
        return config
    layer = discovered_layer(found.profiles(), chosen)

    def origin_of(path: tuple[str, ...]) -> str:
        return DISCOVERED_ORIGIN

    providers = dict(config.providers)
    for name, raw in layer.data["providers"].items():
        providers[name] = parse_profile(name, raw, origin_of, config.retry)
    return replace(config, providers=providers, default_provider=chosen, discovered=chosen)


def _flag_problems(merged: Mapping[str, Any], origin_of: OriginOf) -> list[str]:
    found = [
        f"{bad(origin_of, (key,), 'must be true or false')}; it was ignored"
        for key in ("quiet", "plain", "debug")
        if key in merged and not isinstance(merged[key], bool)
    ]
    if "search" in merged and not isinstance(merged["search"], Mapping):
        found.append(f"{bad(origin_of, ('search',), 'must be an object')}; it was ignored")
    return found


def _retry(raw: Any, origin_of: OriginOf, problems: list[str]) -> RetrySettings:
    try:
        return parse_retry(raw, origin_of, ("retry",), RetrySettings())
    except ConfigError as exc:
        problems.append(f"{exc}; the default retry settings were kept")
        return RetrySettings()


def _profiles(
    raw: Any, origin_of: OriginOf, retry: RetrySettings, problems: list[str]
) -> dict[str, ProviderProfile]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        problems.append(f"{bad(origin_of, ('providers',), 'must be an object')}; it was ignored")
        return {}
    profiles: dict[str, ProviderProfile] = {}
    for name, entry in raw.items():
        try:
            profiles[name] = parse_profile(name, entry, origin_of, retry, problems)
        except ConfigError as exc:
            problems.append(f"{exc}; this provider was skipped")
    return profiles


def _default(
    declared: Any,
    providers: Mapping[str, ProviderProfile],
    origin_of: OriginOf,
    problems: list[str],
) -> str:
    """`default_provider` when it names a profile, else as the reference designs pick."""
    if isinstance(declared, str) and declared in providers:
        return declared
    fallback = fallback_default(providers)
    if declared is not None:
        error = bad(origin_of, ("default_provider",), f"{declared!r} is not a provider")
        problems.append(f"{error}; {fallback!r} is used instead")
    return fallback


def load_config(home: Path, cwd: Path, *, trust_store: Path | None = None) -> Config:
    """Read, merge and validate the layers for a workspace. Never raises.

    `trust_store` is where `harness trust` records trusted project files;
    without one, no project file is trusted.
    """
    problems: list[str] = []
    layers, untrusted = assemble(home, cwd, trust_store, problems)
    merged = merged_data(layers)
    origin_of = origin_finder(layers)
    retry = _retry(merged.get("retry"), origin_of, problems)
    providers = _profiles(merged.get("providers"), origin_of, retry, problems)
    builtin = layers[0].origin == BUILTIN_ORIGIN
    if not providers:
        builtin_raw = builtin_layer().data["providers"][BUILTIN_PROVIDER]
        providers = {
            BUILTIN_PROVIDER: parse_profile(BUILTIN_PROVIDER, builtin_raw, origin_of, retry)
        }
        builtin = True
    problems.extend(_flag_problems(merged, origin_of))
    keys = {p.api_key_env for p in providers.values() if p.api_key_env}
    servers = configured_servers(
        layers,
        home=home,
        cwd=cwd,
        trust_store=trust_store,
        problems=problems,
        guarded=frozenset(keys | set(DISCOVERY_KEY_VARIABLES) | set(SEARCH_KEY_VARIABLES)),
    )
    return Config(
        providers=providers,
        default_provider=_default(merged.get("default_provider"), providers, origin_of, problems),
        agent=parse_agent(merged.get("agent"), origin_of, problems),
        search=parse_search(merged.get("search"), origin_of, problems),
        notify=parse_notify(merged.get("notify"), origin_of, problems),
        hub=parse_hub(merged.get("hub"), origin_of, problems),
        hooks=parse_hooks(layers, problems),
        sources=tuple(layer.origin for layer in layers if layer.origin != BUILTIN_ORIGIN),
        problems=tuple(problems),
        builtin=builtin,
        retry=retry,
        untrusted=untrusted,
        mcp_servers=servers,
    )


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_size, info.st_mtime_ns, info.st_ino)


class ConfigCache:
    """Loaded configs per workspace, reloaded when a file's stat changes.

    Each problem is logged, and handed out by `unreported`, once; a changed
    file or `clear()` (daemon.reload, SIGHUP) makes the current ones new again.
    """

    def __init__(self, home: Path, *, trust_store: Path | None = None) -> None:
        self._home = home
        self.trust_store = trust_store or trust.store_path()
        self._entries: dict[Path, tuple[tuple[Any, ...], Config]] = {}
        self._logged: set[str] = set()
        self._shown: set[str] = set()
        # The last first-run discovery; used only while no config file exists.
        self.found: Found | None = None

    def get(self, cwd: Path) -> Config:
        return with_discovery(self._files(cwd), self.found)

    def _files(self, cwd: Path) -> Config:
        paths = [*config_paths(self._home, cwd), cwd / MCP_CONFIG_NAME, self.trust_store]
        signature = tuple(_signature(p) for p in paths)
        cached = self._entries.get(cwd)
        if cached is not None and cached[0] == signature:
            return cached[1]
        if cached is not None:
            self._forget_reports()
        config = load_config(self._home, cwd, trust_store=self.trust_store)
        for problem in config.problems:
            if problem not in self._logged:
                self._logged.add(problem)
                log.warning("config: %s", problem)
        self._entries[cwd] = (signature, config)
        return config

    def unreported(self, config: Config) -> list[str]:
        """The problems of `config` not handed out before; marks them handed out."""
        fresh = [p for p in config.problems if p not in self._shown]
        self._shown.update(fresh)
        return fresh

    def loaded(self) -> list[Config]:
        """Every config in the cache."""
        return [config for _, config in self._entries.values()]

    def loaded_files(self) -> list[str]:
        """The config files the cached configs were read from."""
        return sorted({source for config in self.loaded() for source in config.sources})

    def clear(self) -> None:
        self._entries.clear()
        self._forget_reports()

    def _forget_reports(self) -> None:
        self._logged.clear()
        self._shown.clear()


def home_dir() -> Path:
    """$HOME when absolute, else the account's home (never `/` for an empty HOME)."""
    return paths.home_dir()


def with_model(profile: ProviderProfile, model: str | None) -> ProviderProfile:
    """`profile` asking for `model` instead of its own, when one is given."""
    return replace(profile, model=model) if model else profile
