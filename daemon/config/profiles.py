"""Provider profiles: the typed records, and the validation of one raw profile.

A profile names where requests go (`endpoint`), how they are asked (`type`),
which environment variable holds the key (`api_key_env`), the model, the
generation parameters sent with every request, the pricing, the retry
policy, and the turn-close notes (`notes`: off with false; `json_schema`:
whether the server is asked for JSON through `response_format`, by default
for type openai only), the window in tokens when the server cannot say it
(`context_window`), `tools: false` for a model without tool calls (its
turns use the text edit format, docs/local-models.md), and `max_parallel`, the
requests the model is sent at once (None: no limit; by default 1 for a loopback
endpoint, none for a hosted one; 0 or null in the file: no limit). Validation raises
`ConfigError` with the file and key of the bad value; `origin_of(key path)`
tells which file set it. Generation keys that are not sampling parameters
(see `generation.py`) are dropped with a problem naming each key and its file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from coding_harness.daemon.config.generation import sampling_only

ProviderType = Literal["openai", "mlx"]
TYPE_ALIASES: dict[str, ProviderType] = {
    "openai": "openai",
    "mlx": "mlx",
    "ollama": "mlx",
    "omlx": "mlx",
    "sushi": "mlx",
}
MAX_ATTEMPTS = 10
IGNORED = (
    "was ignored: generation may set sampling parameters only"
    " (temperature, top_p, max_tokens, stop, seed, ...; see docs/configuration.md)"
)

KeyPath = tuple[str, ...]
OriginOf = Callable[[KeyPath], str]


class ConfigError(Exception):
    """A setting that cannot be used; the message names the file and key."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RetrySettings:
    """How failed requests are retried; `attempts` counts the first one."""

    attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 60.0


# How long a silent server is waited for, in seconds (docs/configuration.md, "Silent servers").
FIRST_BYTE_SECONDS = 120.0
# When prompt processing runs on this machine, or the whole answer comes at once.
SLOW_FIRST_BYTE_SECONDS = 300.0
IDLE_SECONDS = 60.0
MAX_WAIT_SECONDS = 3600.0
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0"})


@dataclass(frozen=True, kw_only=True, slots=True)
class StallLimits:
    """How long to wait for the first byte of an answer, and then between two pieces of it."""

    first_byte: float = FIRST_BYTE_SECONDS
    idle: float = IDLE_SECONDS


def is_local(endpoint: str) -> bool:
    return (urlsplit(endpoint).hostname or "").lower() in LOOPBACK_HOSTS


def default_limits(kind: ProviderType, endpoint: str) -> StallLimits:
    """A local server (or one asked for the whole answer at once) gets longer to start."""
    if kind == "mlx" or is_local(endpoint):
        return StallLimits(first_byte=SLOW_FIRST_BYTE_SECONDS)
    return StallLimits()


@dataclass(frozen=True, kw_only=True, slots=True)
class ProviderProfile:
    name: str
    type: ProviderType
    endpoint: str
    model: str
    api_key_env: str | None = None
    generation: Mapping[str, Any] = field(default_factory=dict)
    pricing: Mapping[str, float] | None = None
    retry: RetrySettings = RetrySettings()
    timeouts: StallLimits = StallLimits()
    notes: bool = True  # a short call after each coding turn keeps project notes
    json_schema: bool = True  # the notes call asks with response_format json_schema
    context_window: int | None = None  # tokens, when the server cannot say (window.py)
    tools: bool = True  # false: the model gets no tools, edits come as text blocks
    max_parallel: int | None = None  # requests sent at once; None: no limit (model_gate.py)


def bad(origin_of: OriginOf, path: KeyPath, what: str) -> ConfigError:
    """A ConfigError for the value at `path`: `<file>: <dotted key> <what>`."""
    return ConfigError(f"{origin_of(path)}: {'.'.join(path)} {what}")


def parse_profile(
    name: str,
    raw: Any,
    origin_of: OriginOf,
    retry: RetrySettings,
    problems: list[str] | None = None,
) -> ProviderProfile:
    """The profile `providers.<name>`; `retry` is the top-level policy it refines.

    What was dropped without making the profile unusable goes to `problems`.
    """
    at: KeyPath = ("providers", name)
    if not isinstance(raw, Mapping):
        raise bad(origin_of, at, "must be an object")
    kind = TYPE_ALIASES.get(str(raw.get("type", "openai")).lower())
    if kind is None:
        raise bad(
            origin_of, (*at, "type"), f"{raw.get('type')!r} is not one of {sorted(TYPE_ALIASES)}"
        )
    endpoint, model = raw.get("endpoint"), raw.get("model")
    if not isinstance(endpoint, str) or not endpoint.startswith(("http://", "https://")):
        raise bad(origin_of, (*at, "endpoint"), "must be an http(s) URL")
    if not isinstance(model, str) or not model:
        raise bad(origin_of, (*at, "model"), "must be a non-empty string")
    key_env = raw.get("api_key_env")
    if key_env is not None and not (isinstance(key_env, str) and key_env.isidentifier()):
        raise bad(origin_of, (*at, "api_key_env"), "must be the name of an environment variable")
    if "api_key" in raw:
        raise bad(
            origin_of,
            (*at, "api_key"),
            "is not read: keys stay in the environment; set api_key_env to the variable's name",
        )
    return ProviderProfile(
        name=name,
        type=kind,
        endpoint=endpoint,
        model=model,
        api_key_env=key_env or None,
        generation=_generation(raw.get("generation"), origin_of, at, problems),
        pricing=_pricing(raw.get("pricing"), origin_of, at),
        retry=parse_retry(raw.get("retry"), origin_of, (*at, "retry"), retry),
        timeouts=parse_limits(
            raw.get("timeouts"), origin_of, (*at, "timeouts"), default_limits(kind, endpoint)
        ),
        notes=_flag(raw, "notes", True, origin_of, at),
        json_schema=_flag(raw, "json_schema", kind == "openai", origin_of, at),
        context_window=_window(raw.get("context_window"), origin_of, at),
        tools=_flag(raw, "tools", True, origin_of, at),
        max_parallel=_parallel(raw, endpoint, origin_of, at),
    )


def _parallel(
    raw: Mapping[str, Any], endpoint: str, origin_of: OriginOf, at: KeyPath
) -> int | None:
    """`max_parallel`: unset, 1 for a loopback endpoint (a local server answers one at a
    time) and no limit for a hosted one; 0 or null: no limit."""
    if "max_parallel" not in raw:
        return 1 if is_local(endpoint) else None
    value = raw["max_parallel"]
    if value is None or (value == 0 and not isinstance(value, bool)):
        return None
    if not (isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 1024):
        raise bad(
            origin_of,
            (*at, "max_parallel"),
            "must be a whole number from 1 to 1024, or 0 for no limit",
        )
    return value


def _window(raw: Any, origin_of: OriginOf, at: KeyPath) -> int | None:
    if raw is None:
        return None
    if not (isinstance(raw, int) and not isinstance(raw, bool) and 256 <= raw <= 100_000_000):
        raise bad(origin_of, (*at, "context_window"), "must be a whole number of tokens (>= 256)")
    return raw


def _flag(
    raw: Mapping[str, Any], key: str, default: bool, origin_of: OriginOf, at: KeyPath
) -> bool:
    value = raw.get(key, default)
    if not isinstance(value, bool):
        raise bad(origin_of, (*at, key), "must be true or false")
    return value


def _generation(
    raw: Any, origin_of: OriginOf, at: KeyPath, problems: list[str] | None
) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise bad(origin_of, (*at, "generation"), "must be an object")
    kept, ignored = sampling_only(raw)
    if problems is not None:
        problems.extend(str(bad(origin_of, (*at, "generation", key), IGNORED)) for key in ignored)
    return kept


def _pricing(raw: Any, origin_of: OriginOf, at: KeyPath) -> dict[str, float] | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping) or not all(_number(v) for v in raw.values()):
        raise bad(origin_of, (*at, "pricing"), "must map names to numbers (USD per 1M tokens)")
    return {str(k): float(v) for k, v in raw.items()}


def parse_retry(raw: Any, origin_of: OriginOf, at: KeyPath, base: RetrySettings) -> RetrySettings:
    """`base` with the keys `raw` sets; a bad value raises naming its key."""
    if raw is None:
        return base
    if not isinstance(raw, Mapping):
        raise bad(origin_of, at, "must be an object")
    attempts = raw.get("attempts", base.attempts)
    if not (_number(attempts) and isinstance(attempts, int) and 1 <= attempts <= MAX_ATTEMPTS):
        raise bad(origin_of, (*at, "attempts"), f"must be a whole number from 1 to {MAX_ATTEMPTS}")
    values: dict[str, Any] = {"attempts": attempts}
    for key in ("base_delay", "max_delay", "max_retry_after"):
        value = raw.get(key, getattr(base, key))
        if not (_number(value) and 0 <= value <= 3600):
            raise bad(origin_of, (*at, key), "must be a number of seconds from 0 to 3600")
        values[key] = float(value)
    unknown = sorted(set(raw) - {"attempts", *values})
    if unknown:
        raise bad(origin_of, (*at, unknown[0]), "is not a retry setting")
    return RetrySettings(**values)


def parse_limits(raw: Any, origin_of: OriginOf, at: KeyPath, base: StallLimits) -> StallLimits:
    """`base` with the `timeouts` keys `raw` sets; a bad value raises naming its key."""
    if raw is None:
        return base
    if not isinstance(raw, Mapping):
        raise bad(origin_of, at, "must be an object")
    values: dict[str, float] = {}
    for key in ("first_byte", "idle"):
        value = raw.get(key, getattr(base, key))
        if not (_number(value) and 0 < value <= MAX_WAIT_SECONDS):
            raise bad(
                origin_of,
                (*at, key),
                f"must be a number of seconds above 0, at most {MAX_WAIT_SECONDS:g}",
            )
        values[key] = float(value)
    unknown = sorted(set(raw) - set(values))
    if unknown:
        raise bad(origin_of, (*at, unknown[0]), "is not a timeout (first_byte, idle)")
    return StallLimits(**values)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
