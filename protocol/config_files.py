"""Where the configuration files are, and how layers merge.

Shared by the daemon (which loads the configuration) and by clients that read
it themselves (`harness doctor`, shell completion), so both name the same
files and merge them the same way. Standard library only.
"""

from __future__ import annotations

from pathlib import Path

from coding_harness.protocol import json_text

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

GLOBAL_CONFIG_NAME = ".coding_harness.json"
PROJECT_CONFIG_NAME = ".local_coding_harness.json"
# The project's MCP servers in the form other agents read (`{"mcpServers": {...}}`).
MCP_CONFIG_NAME = ".mcp.json"
LEGACY_CONFIG_PATH = Path(".config") / "coding-agent" / "config.json"
# Key paths only the user's own files (global, legacy), flags and commands may set:
# a project file's are dropped, trusted or not (`trust.drop_user_only`). `debug`
# writes the raw exchanges, every file the model read included, to disk;
# `agent.sandbox_home` shows folders of HOME to every command a recipe runs;
# `agent.allow_commands` lets commands run without a question (a project may never
# widen what runs); `hub` names the database every session is copied to.
USER_ONLY_KEYS: tuple[tuple[str, ...], ...] = (
    ("debug",),
    ("hub",),
    ("agent", "sandbox_home"),
    ("agent", "allow_commands"),
)
# The web search keys the daemon reads (its `tools/search.py`), named here too so a
# client can send their values before it has asked the daemon anything.
SEARCH_KEY_VARIABLES = ("BRAVE_SEARCH_API_KEY", "EXA_API_KEY", "EXA_SEARCH_API_KEY")
# The usual key variables first-run discovery looks for when no config file exists
# (the daemon's `discovery.KEY_VARIABLES`, in its order).
DISCOVERY_KEY_VARIABLES = (
    "OPENAI_API_KEY",
    "OPENROUTER_API_KEY",
    "FIREWORKS_API_KEY",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
    "TOGETHER_API_KEY",
    "MISTRAL_API_KEY",
    "CEREBRAS_API_KEY",
    "XAI_API_KEY",
    "GEMINI_API_KEY",
)


class NestedTooDeeply(ValueError):
    """JSON nested deeper than the parser's recursion allows (a hostile file)."""


def parse_json(text: str | bytes) -> Any:
    """`json.loads`, with nesting too deep for the parser reported as a ValueError
    (`NestedTooDeeply`) like any other invalid JSON, never a RecursionError."""
    try:
        return json_text.loads(text)
    except RecursionError:
        raise NestedTooDeeply("nested too deeply to read") from None


def profile_key_names(data: Mapping[str, Any]) -> list[str]:
    """The `api_key_env` variables the profiles of one config file's data name."""
    providers = data.get("providers")
    if not isinstance(providers, dict):  # JSON's objects (collections.abc costs a one-shot)
        return []
    return [
        profile["api_key_env"]
        for profile in providers.values()
        if isinstance(profile, dict)
        and isinstance(profile.get("api_key_env"), str)
        and profile["api_key_env"].isidentifier()
    ]


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
        if isinstance(value, dict) and isinstance(merged.get(key), dict):  # JSON's objects
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged
