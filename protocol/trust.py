"""Trusted project configs: which keys need trust, and where trust is recorded.

A project's `.local_coding_harness.json` arrives with the repository, so it is
not the user's own word. Without trust it may change only what cannot widen
where requests go, which key they carry or what runs: the patterns in
`SAFE_KEYS`. Every other key, including any added in a later version, waits
until the user runs `harness trust` in the project.

Trust binds three things: the workspace (its real path), the file's name in
it and the SHA-256 of its bytes. The store is a JSON object in the state
folder, `{real path of the workspace: {file name: sha256}}`; any change to the
file changes the digest and so revokes it, and trusting one workspace never
trusts another, even a copy with the same bytes. A project file that is a
symbolic link is never trusted (`project_files.py` refuses to read one): a
link to a file the user trusted elsewhere must not carry that trust here.
The store before this (`trusted_projects.json`, keyed by the real path of the
file, so a link carried its target's trust) is not read: such a project is
asked about again. The daemon reads the store, `harness trust` writes it; both
go through this module (standard library only).

Keys of `USER_ONLY_KEYS` are the user's switches: a project file's are
ignored, trusted or not.
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
from coding_harness.protocol.config_files import USER_ONLY_KEYS, parse_json

STORE_NAME = "trusted_workspaces.json"
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


Entries = dict[str, dict[str, str]]


def load(store: Path) -> Entries:
    """The recorded digests by workspace and file name; a missing or unreadable store
    trusts nothing."""
    try:
        data = parse_json(store.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        folder: {n: d for n, d in files.items() if isinstance(n, str) and isinstance(d, str)}
        for folder, files in data.items()
        if isinstance(folder, str) and isinstance(files, dict)
    }


def _place(config_file: Path) -> tuple[str, str]:
    """(the workspace's real path, the file's name in it)."""
    return os.path.realpath(config_file.parent), config_file.name


def is_trusted(store: Path, config_file: Path, data: bytes) -> bool:
    """True when `data`, the bytes of `config_file`, are what the user trusted for this
    file of this workspace; never for a file that is a symbolic link."""
    if config_file.is_symlink():
        return False
    folder, name = _place(config_file)
    return load(store).get(folder, {}).get(name) == digest(data)


def record(store: Path, config_file: Path, data: bytes | None) -> None:
    """Trust `data` for `config_file` in its workspace, or with None forget the file.
    `ValueError` for a symbolic link: its target's bytes are not this workspace's file."""
    if data is not None and config_file.is_symlink():
        raise ValueError(f"{config_file} is a symbolic link; a link is never trusted")
    entries = load(store)
    folder, name = _place(config_file)
    files = entries.setdefault(folder, {})
    if data is None:
        files.pop(name, None)
    else:
        files[name] = digest(data)
    if not files:
        del entries[folder]
    _write_private(store, json.dumps(entries, indent=1, sort_keys=True) + "\n")


def user_only(path: KeyPath) -> bool:
    """Whether `path` lies under a key of USER_ONLY_KEYS."""
    return any(_covers(pattern, path) for pattern in USER_ONLY_KEYS)


def drop_user_only(data: Mapping[str, Any]) -> tuple[dict[str, Any], list[KeyPath]]:
    """(`data` without the user-only keys, the key paths dropped); `data` is left as is."""
    kept = dict(data)
    dropped = [pattern for pattern in USER_ONLY_KEYS if _remove(kept, pattern)]
    return kept, dropped


def _remove(node: dict[str, Any], path: KeyPath) -> bool:
    """Remove `path` from `node`, copying the objects along it; whether it was there."""
    head, rest = path[0], path[1:]
    if head not in node:
        return False
    if not rest:
        del node[head]
        return True
    child = node[head]
    if not isinstance(child, Mapping):
        return False
    copied = dict(child)
    if not _remove(copied, rest):
        return False
    if copied:
        node[head] = copied
    else:  # an object left empty would count as a key of its own
        del node[head]
    return True


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
