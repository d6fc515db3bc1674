"""The config files as layers: read, gated by trust, put in order.

`assemble` reads `~/.coding_harness.json`, the project's
`.local_coding_harness.json` (read only as a regular file in the workspace, never
through a symbolic link; keeping, until the user trusts it, only what
`protocol.trust.split` allows, and never the user's own switches of
`protocol.trust.USER_ONLY_KEYS`) and the legacy `~/.config/coding-agent/config.json`
(the harness shape, or the flat `provider` / `model` of the Swift port), and
adds the built-in `local` profile below them when no file declares a provider.
With no file at all, what first-run discovery found (`discovered_layer`) lies over
the built-in profile; a config file, once written, replaces both.
`origin_finder` tells which file set a key, so validation can name it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coding_harness.daemon.config.profiles import KeyPath, OriginOf
from coding_harness.protocol import trust
from coding_harness.protocol.config_files import (
    GLOBAL_CONFIG_NAME,
    LEGACY_CONFIG_PATH,
    PROJECT_CONFIG_NAME,
    deep_merge,
    parse_json,
)
from coding_harness.protocol.project_files import ProjectFileRefused, read_project_file
from coding_harness.protocol.vocabulary import BUILTIN_PROVIDER, LOCAL_ENDPOINT

BUILTIN_MODEL = "qwen2.5-coder"
BUILTIN_ORIGIN = "built-in defaults"
DISCOVERED_ORIGIN = "discovered on this machine"
# Without a default_provider, the reference designs pick this one when configured.
PREFERRED_DEFAULT = "fireworks"
UNTRUSTED_SHOWN = 8


# Keys only the user's global file may set, trusted project or not: what the
# command sandbox shows of the home folder.
@dataclass(kw_only=True, slots=True)
class Layer:
    origin: str
    data: dict[str, Any]
    raw: bytes = b""


def config_paths(home: Path, cwd: Path) -> list[Path]:
    """Global, project and legacy config files, in that order."""
    return [home / GLOBAL_CONFIG_NAME, cwd / PROJECT_CONFIG_NAME, home / LEGACY_CONFIG_PATH]


def _read_layer(path: Path, problems: list[str], *, project: bool = False) -> Layer | None:
    """One file as a layer; a project's only as a regular file (`read_project_file`)."""
    try:
        raw = read_project_file(path, limit=None) if project else path.read_bytes()
    except FileNotFoundError:
        return None
    except ProjectFileRefused as exc:
        problems.append(str(exc))
        return None
    except OSError as exc:
        problems.append(f"{path}: cannot read ({exc.strerror}); it was ignored")
        return None
    if raw is None:
        return None
    try:
        data = parse_json(raw.decode("utf-8"))
    except ValueError as exc:
        problems.append(f"{path}: not valid JSON ({exc}); it was ignored")
        return None
    if not isinstance(data, dict):
        problems.append(f"{path}: the top level must be a JSON object; it was ignored")
        return None
    return Layer(origin=str(path), data=data, raw=raw)


def _names(*layers: Layer | None) -> set[str]:
    names: set[str] = set()
    for layer in layers:
        providers = layer.data.get("providers") if layer else None
        if isinstance(providers, Mapping):
            names.update(str(name) for name in providers)
    return names


def _legacy(layer: Layer | None, problems: list[str]) -> tuple[Layer | None, str | None]:
    """The legacy file as a harness-shaped layer, and the model its flat form names."""
    if layer is None:
        return None, None
    data = dict(layer.data)
    provider, model = data.pop("provider", None), data.pop("model", None)
    for key, value in (("provider", provider), ("model", model)):
        if value is not None and not (isinstance(value, str) and value):
            problems.append(f"{layer.origin}: {key} must be a non-empty string; it was ignored")
    if isinstance(provider, str) and provider:
        data.setdefault("default_provider", provider)
    layer.data = data
    return layer, model if isinstance(model, str) and model else None


def _has(data: Mapping[str, Any], path: KeyPath) -> bool:
    node: Any = data
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return False
        node = node[key]
    return True


def _gate_project(
    project: Layer | None, known: set[str], store: Path | None, cwd: Path, problems: list[str]
) -> tuple[Layer | None, tuple[str, ...]]:
    """The project layer without the user's own switches and with the keys that wait for
    trust removed, and those keys."""
    if project is None:
        return None, ()
    project.data, dropped = trust.drop_user_only(project.data)
    if dropped:
        problems.append(_user_only_problem(project.origin, dropped))
    path = cwd / PROJECT_CONFIG_NAME
    if store is not None and trust.is_trusted(store, path, project.raw):
        return project, ()
    project.data, refused = trust.split(project.data, known or {BUILTIN_PROVIDER})
    return project, tuple(".".join(p) for p in refused)


def _user_only_problem(origin: str, keys: list[KeyPath]) -> str:
    shown = ", ".join(".".join(key) for key in keys)
    return (
        f"{origin}: {shown} ignored, trusted or not: only you set this (its flag or "
        f"command, or ~/{GLOBAL_CONFIG_NAME}), never a project's file"
    )


def _untrusted_problem(origin: str, keys: tuple[str, ...], cwd: Path) -> str:
    shown = ", ".join(keys[:UNTRUSTED_SHOWN])
    if len(keys) > UNTRUSTED_SHOWN:
        shown += f" and {len(keys) - UNTRUSTED_SHOWN} more"
    return (
        f"{origin}: {shown} ignored: this project's file may change where requests go or "
        f"what runs only once you trust it; review it, then run `harness trust` in {cwd}"
    )


def builtin_layer() -> Layer:
    profile = {"type": "openai", "endpoint": LOCAL_ENDPOINT, "model": BUILTIN_MODEL}
    return Layer(
        origin=BUILTIN_ORIGIN,
        data={"providers": {BUILTIN_PROVIDER: profile}, "default_provider": BUILTIN_PROVIDER},
    )


def discovered_layer(profiles: Mapping[str, Mapping[str, Any]], chosen: str) -> Layer:
    """What first-run discovery found, over the built-in profile; only ever used when
    there is no config file at all."""
    return Layer(
        origin=DISCOVERED_ORIGIN,
        data={"providers": {n: dict(p) for n, p in profiles.items()}, "default_provider": chosen},
    )


def assemble(
    home: Path, cwd: Path, store: Path | None, problems: list[str]
) -> tuple[list[Layer], tuple[str, ...]]:
    """Every layer in order, lowest first, and the project keys waiting for trust."""
    paths = config_paths(home, cwd)
    user = _read_layer(paths[0], problems)
    legacy, legacy_model = _legacy(_read_layer(paths[2], problems), problems)
    known = _names(user, legacy)
    project_layer = _read_layer(paths[1], problems, project=True)
    project, untrusted = _gate_project(project_layer, known, store, cwd, problems)
    if untrusted and project is not None:
        problems.append(_untrusted_problem(project.origin, untrusted, cwd))
    files = [layer for layer in (user, project) if layer is not None]
    # The built-in profile underlies files that declare no provider but may tune it.
    tuned_only = _names(*files, legacy) <= {BUILTIN_PROVIDER}
    layers = [builtin_layer(), *files] if tuned_only else files
    if legacy is not None:
        if legacy_model is not None:
            target = _default_name([*layers, legacy])
            legacy.data = deep_merge(legacy.data, {"providers": {target: {"model": legacy_model}}})
        layers.append(legacy)
    return layers, untrusted


def merged_data(layers: Iterable[Layer]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for layer in layers:
        merged = deep_merge(merged, layer.data)
    return merged


def _default_name(layers: list[Layer]) -> str:
    merged = merged_data(layers)
    declared = merged.get("default_provider")
    if isinstance(declared, str) and declared:
        return declared
    return fallback_default(_names(*layers))


def fallback_default(names: Iterable[str]) -> str:
    """The default without a valid default_provider: fireworks, else the first name."""
    ordered = sorted(names)
    if PREFERRED_DEFAULT in ordered:
        return PREFERRED_DEFAULT
    return ordered[0] if ordered else BUILTIN_PROVIDER


def origin_finder(layers: list[Layer]) -> OriginOf:
    """Which file set a key path, or the nearest object around it."""

    def origin_of(path: KeyPath) -> str:
        for size in range(len(path), 0, -1):
            for layer in reversed(layers):
                if _has(layer.data, path[:size]):
                    return layer.origin
        return "config"

    return origin_of
