"""Config layers with real files: merge, built-in default, validation, reload."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from coding_harness.daemon.config.loader import ConfigCache, load_config
from coding_harness.daemon.config.profiles import ConfigError
from coding_harness.daemon.tools.web.search import SEARCH_KEY_VARIABLES
from coding_harness.protocol.config_files import deep_merge
from coding_harness.protocol.vocabulary import BUILTIN_PROVIDER, LOCAL_ENDPOINT


def write(path: Path, data: object) -> None:
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)


def test_no_config_gives_the_builtin_local_profile(dirs: tuple[Path, Path]) -> None:
    config = load_config(*dirs)
    assert config.builtin and config.default_provider == BUILTIN_PROVIDER
    assert config.profile(None).endpoint == LOCAL_ENDPOINT


def test_project_config_merges_key_by_key(dirs: tuple[Path, Path]) -> None:
    home, cwd = dirs
    write(
        home / ".coding_harness.json",
        {
            "default_provider": "fw",
            "providers": {
                "fw": {
                    "type": "openai",
                    "endpoint": "https://x/v1/chat/completions",
                    "model": "big",
                    "api_key_env": "FW_KEY",
                    "generation": {"temperature": 0.6, "max_tokens": 100},
                }
            },
        },
    )
    write(
        cwd / ".local_coding_harness.json",
        {"providers": {"fw": {"generation": {"temperature": 0.1}}}},
    )
    profile = load_config(home, cwd).profile(None)
    assert profile.generation == {"temperature": 0.1, "max_tokens": 100}
    assert profile.model == "big" and profile.api_key_env == "FW_KEY"
    assert load_config(home, cwd).key_env_names() == sorted(["FW_KEY", *SEARCH_KEY_VARIABLES])


def test_type_aliases_map_to_mlx(dirs: tuple[Path, Path]) -> None:
    home, cwd = dirs
    providers = {
        n: {"type": n, "endpoint": "http://h/v1", "model": "m"} for n in ("ollama", "omlx", "sushi")
    }
    write(home / ".coding_harness.json", {"providers": providers})
    config = load_config(home, cwd)
    assert {p.type for p in config.providers.values()} == {"mlx"}


def test_bad_files_and_values_are_reported_not_fatal(dirs: tuple[Path, Path]) -> None:
    home, cwd = dirs
    write(home / ".coding_harness.json", "{not json")
    write(
        cwd / ".local_coding_harness.json",
        {"providers": {"p": {"type": "grpc", "endpoint": "x", "model": "m"}}},
    )
    config = load_config(home, cwd)
    assert config.builtin
    assert any(".coding_harness.json" in p and "not valid JSON" in p for p in config.problems)
    assert any("providers.p.type" in p for p in config.problems)


def test_unknown_provider_names_the_fix(dirs: tuple[Path, Path]) -> None:
    with pytest.raises(ConfigError, match=r"unknown provider 'nope'.*coding_harness.json"):
        load_config(*dirs).profile("nope")


def test_cache_reloads_when_a_file_changes(dirs: tuple[Path, Path]) -> None:
    home, cwd = dirs
    cache = ConfigCache(home)
    first = cache.get(cwd)
    assert cache.get(cwd) is first
    write(
        home / ".coding_harness.json",
        {"providers": {"a": {"endpoint": "http://a/v1", "model": "m"}}},
    )
    second = cache.get(cwd)
    assert second is not first and "a" in second.providers
    # Same size, new content and mtime: still noticed.
    write(
        home / ".coding_harness.json",
        {"providers": {"b": {"endpoint": "http://a/v1", "model": "m"}}},
    )
    os.utime(home / ".coding_harness.json", ns=(1, 1))
    assert "b" in cache.get(cwd).providers


def test_deep_merge_replaces_non_objects() -> None:
    assert deep_merge({"a": {"b": 1, "c": [1]}}, {"a": {"c": [2]}, "d": 3}) == {
        "a": {"b": 1, "c": [2]},
        "d": 3,
    }
