"""Trusted project configs: which keys need trust, and where trust is recorded.

A project's `.local_coding_harness.json` arrives with the repository, so it is
not the user's own word. Without trust it may change only what cannot widen
where requests go, which key they carry or what runs: the patterns in
`SAFE_KEYS`. Every other key, including any added in a later version, waits
until the user runs `harness trust` in the project.

Trust is a JSON object in the state folder, `{real path of the file: sha256
of its bytes}`; any change to the file changes the digest and so revokes it.
The daemon reads the store, `harness trust` writes it; both go through this
module (standard library only).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from coding_harness.protocol import paths
from coding_harness.protocol.config_files import parse_json

STORE_NAME = "trusted_projects.json"
ANY = "*"

# Key paths a project file may set without trust; a pattern covers its subtree.
# The daemon also refuses a provider, or a default_provider, that only the
# project file names: a new provider means a new place to send requests.
SAFE_KEYS: tuple[tuple[str, ...], ...] = (
    ("default_provider",),
    ("providers", ANY, "model"),
    ("providers", ANY, "generation"),
    ("providers", ANY, "retry"),
    ("retry",),
    ("agent", "max_iterations"),
    ("agent", "check_timeout"),
    ("agent", "command_timeout"),
    ("quiet",),
    ("plain",),
    ("debug",),
)

KeyPath = tuple[str, ...]


def store_path(env: Mapping[str, str] | None = None) -> Path:
    """The trust store in the state folder (`$XDG_STATE_HOME/coding-harness/`)."""
    return paths.state_dir(None if env is None else dict(env)) / STORE_NAME


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def leaf_paths(data: Mapping[str, Any], prefix: KeyPath = ()) -> Iterator[KeyPath]:
    """Every key path that holds a value other than a non-empty object."""
    for key, value in data.items():
        path = (*prefix, str(key))
        if isinstance(value, Mapping) and value:
            yield from leaf_paths(value, path)
        else:
            yield path


def needs_trust(path: KeyPath) -> bool:
    """True unless a pattern of SAFE_KEYS covers `path`."""
    return not any(_covers(pattern, path) for pattern in SAFE_KEYS)


def _covers(pattern: KeyPath, path: KeyPath) -> bool:
    if len(path) < len(pattern):
        return False
    return all(want in (ANY, got) for want, got in zip(pattern, path, strict=False))


def split(
    data: Mapping[str, Any], known: set[str] | None = None
) -> tuple[dict[str, Any], list[KeyPath]]:
    """(what an untrusted project file may set, the key paths that wait for trust).

    With `known`, the names of the providers the user's own files declare, a
    provider or default_provider that only this file names waits too.
    """
    kept: dict[str, Any] = {}
    refused: list[KeyPath] = []
    for path in leaf_paths(data):
        value = _lookup(data, path)
        if needs_trust(path) or (known is not None and _names_new(path, value, known)):
            refused.append(path)
            continue
        node = kept
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = value
    return kept, refused


def _names_new(path: KeyPath, value: Any, known: set[str]) -> bool:
    if path[0] == "providers":
        return len(path) > 1 and path[1] not in known
    return path == ("default_provider",) and value not in known


def _lookup(data: Mapping[str, Any], path: KeyPath) -> Any:
    node: Any = data
    for key in path:
        node = node[key]
    return node


def load(store: Path) -> dict[str, str]:
    """The recorded digests; a missing or unreadable store trusts nothing."""
    try:
        data = parse_json(store.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}


def is_trusted(store: Path, config_file: Path, data: bytes) -> bool:
    """True when `data`, the bytes of `config_file`, are what the user trusted."""
    return load(store).get(os.path.realpath(config_file)) == digest(data)


def record(store: Path, config_file: Path, data: bytes | None) -> None:
    """Trust `data` for `config_file`, or with None forget the file."""
    entries = load(store)
    key = os.path.realpath(config_file)
    if data is None:
        entries.pop(key, None)
    else:
        entries[key] = digest(data)
    _write_private(store, json.dumps(entries, indent=1, sort_keys=True) + "\n")


def _write_private(target: Path, text: str) -> None:
    """Write `text` atomically, readable by this user only."""
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        Path(temp).replace(target)
    except BaseException:
        with contextlib.suppress(OSError):
            Path(temp).unlink()
        raise
