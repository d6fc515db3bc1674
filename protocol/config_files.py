"""Where the configuration files are, and how layers merge.

Shared by the daemon (which loads the configuration) and by clients that read
it themselves (`harness doctor`, shell completion), so both name the same
files and merge them the same way. Standard library only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

GLOBAL_CONFIG_NAME = ".coding_harness.json"
PROJECT_CONFIG_NAME = ".local_coding_harness.json"
LEGACY_CONFIG_PATH = Path(".config") / "coding-agent" / "config.json"


class NestedTooDeeply(ValueError):
    """JSON nested deeper than the parser's recursion allows (a hostile file)."""


def parse_json(text: str | bytes) -> Any:
    """`json.loads`, with nesting too deep for the parser reported as a ValueError
    (`NestedTooDeeply`) like any other invalid JSON, never a RecursionError."""
    try:
        return json.loads(text)
    except RecursionError:
        raise NestedTooDeeply("nested too deeply to read") from None


def global_config(home: Path) -> Path:
    return home / GLOBAL_CONFIG_NAME


def project_config(cwd: Path) -> Path:
    return cwd / PROJECT_CONFIG_NAME


def legacy_config(home: Path) -> Path:
    return home / LEGACY_CONFIG_PATH


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """`over` merged onto `base`: objects merge key by key, anything else replaces."""
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged
