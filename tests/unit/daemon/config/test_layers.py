"""Config layers with real files: order, legacy file, environment, validation, problems."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from coding_harness.daemon.config.loader import ConfigCache, load_config
from coding_harness.daemon.config.profiles import RetrySettings
from coding_harness.protocol.config_files import LEGACY_CONFIG_PATH
from coding_harness.protocol.vocabulary import BUILTIN_PROVIDER

CLOUD = {
    "type": "openai",
    "endpoint": "https://cloud.example/v1/chat/completions",
    "model": "big",
    "api_key_env": "CLOUD_KEY",
}
LOCAL = {"type": "mlx", "endpoint": "http://localhost:8080/v1/chat/completions", "model": "small"}


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def user_file(home: Path) -> Path:
    return home / ".coding_harness.json"


def legacy_file(home: Path) -> Path:
    return home / LEGACY_CONFIG_PATH


def test_legacy_harness_shape_wins_over_user_and_project(dirs: tuple[Path, Path]) -> None:
    home, cwd = dirs
    write(user_file(home), {"default_provider": "cloud", "providers": {"cloud": CLOUD}})
    write(cwd / ".local_coding_harness.json", {"providers": {"cloud": {"model": "project"}}})
    write(legacy_file(home), {"providers": {"cloud": {"generation": {"temperature": 0.3}}}})
    config = load_config(home, cwd)
    profile = config.profile(None)
    assert profile.model == "project"
    assert profile.generation == {"temperature": 0.3}
    assert config.sources == (
        str(user_file(home)),
        str(cwd / ".local_coding_harness.json"),
        str(legacy_file(home)),
    )


def test_legacy_flat_file_picks_provider_and_model(dirs: tuple[Path, Path]) -> None:
    home, cwd = dirs
    write(
        user_file(home),
        {"default_provider": "cloud", "providers": {"cloud": CLOUD, "local": LOCAL}},
    )
    write(legacy_file(home), {"provider": "local", "model": "legacy-model"})
    config = load_config(home, cwd)
    assert config.default_provider == "local"
    assert config.profile(None).model == "legacy-model"
    assert config.profile("cloud").model == "big"  # the model goes with the provider it names


def test_legacy_flat_model_alone_applies_to_the_default(dirs: tuple[Path, Path]) -> None:
    home, cwd = dirs
    write(legacy_file(home), {"model": "mine"})
    config = load_config(home, cwd)
    assert config.builtin and config.profile(None).model == "mine"


def test_legacy_file_alone_declares_providers(dirs: tuple[Path, Path]) -> None:
    home, cwd = dirs
    write(legacy_file(home), {"providers": {"cloud": CLOUD}})
    config = load_config(home, cwd)
    assert not config.builtin and list(config.providers) == ["cloud"]


def test_daemon_ignores_its_own_coding_agent_environment(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The client sends CODING_AGENT_PROVIDER/MODEL as session.create params; the
    # daemon's environment is a snapshot of whichever shell started it.
    home, cwd = dirs
    write(
        user_file(home),
        {"default_provider": "cloud", "providers": {"cloud": CLOUD, "local": LOCAL}},
    )
    monkeypatch.setenv("CODING_AGENT_PROVIDER", "local")
    monkeypatch.setenv("CODING_AGENT_MODEL", "other")
    profile = load_config(home, cwd).profile(None)
    assert (profile.name, profile.model) == ("cloud", "big")


def test_bad_values_name_the_file_and_key(dirs: tuple[Path, Path]) -> None:
    home, cwd = dirs
    write(
        user_file(home),
        {
            "providers": {"cloud": CLOUD, "broken": {"endpoint": "ftp://x", "model": "m"}},
            "agent": {"max_iterations": "many"},
            "quiet": "yes",
        },
    )
    write(legacy_file(home), {"providers": {"cloud": {"pricing": {"input": "cheap"}}}})
    problems = load_config(home, cwd).problems
    user, legacy = str(user_file(home)), str(legacy_file(home))
    assert (
        f"{user}: providers.broken.endpoint must be an http(s) URL; this provider was skipped"
        in problems
    )
    assert any(p.startswith(f"{legacy}: providers.cloud.pricing must map") for p in problems)
    assert any(p.startswith(f"{user}: agent.max_iterations must be") for p in problems)
    assert any(p.startswith(f"{user}: quiet must be true or false") for p in problems)


def test_a_key_in_the_file_is_refused_with_the_fix(dirs: tuple[Path, Path]) -> None:
    home, cwd = dirs
    write(user_file(home), {"providers": {"cloud": {**CLOUD, "api_key": "sk-secret"}}})
    config = load_config(home, cwd)
    assert config.builtin
    (problem,) = config.problems
    assert "providers.cloud.api_key" in problem and "api_key_env" in problem
    assert "sk-secret" not in problem


def test_unknown_default_provider_is_reported_and_replaced(dirs: tuple[Path, Path]) -> None:
    home, cwd = dirs
    write(user_file(home), {"default_provider": "gone", "providers": {"cloud": CLOUD}})
    config = load_config(home, cwd)
    assert config.default_provider == "cloud"
    assert any("default_provider 'gone' is not a provider" in p for p in config.problems)


def test_retry_settings_top_level_and_per_profile(dirs: tuple[Path, Path]) -> None:
    home, cwd = dirs
    write(
        user_file(home),
        {
            "retry": {"attempts": 3, "base_delay": 0.01},
            "providers": {"cloud": {**CLOUD, "retry": {"attempts": 2}}, "local": LOCAL},
        },
    )
    config = load_config(home, cwd)
    assert config.profile("local").retry == RetrySettings(attempts=3, base_delay=0.01)
    assert config.profile("cloud").retry == RetrySettings(attempts=2, base_delay=0.01)


@pytest.mark.parametrize(
    ("retry", "key"),
    [
        ({"attempts": 0}, "retry.attempts"),
        ({"base_delay": -1}, "retry.base_delay"),
        ({"tries": 2}, "retry.tries"),
    ],
)
def test_bad_retry_settings_keep_the_defaults(
    dirs: tuple[Path, Path], retry: object, key: str
) -> None:
    home, cwd = dirs
    write(user_file(home), {"retry": retry, "providers": {"cloud": CLOUD}})
    config = load_config(home, cwd)
    assert config.retry == RetrySettings()
    assert any(p.startswith(f"{user_file(home)}: {key} ") for p in config.problems)


def test_builtin_profile_only_without_declared_providers(dirs: tuple[Path, Path]) -> None:
    home, cwd = dirs
    assert load_config(home, cwd).default_provider == BUILTIN_PROVIDER
    write(user_file(home), {"providers": {"cloud": CLOUD}})
    assert list(load_config(home, cwd).providers) == ["cloud"]


def test_problems_are_handed_out_once_until_something_changes(dirs: tuple[Path, Path]) -> None:
    home, cwd = dirs
    path = write(user_file(home), "{broken")
    cache = ConfigCache(home, trust_store=home / "trust.json")
    config = cache.get(cwd)
    assert len(cache.unreported(config)) == 1
    assert cache.unreported(cache.get(cwd)) == []
    assert cache.unreported(cache.get(home)) == []  # the same problem from another workspace
    write(path, "{still broken}")
    assert len(cache.unreported(cache.get(cwd))) == 1
    cache.clear()
    assert len(cache.unreported(cache.get(cwd))) == 1
    assert cache.get(cwd).problems  # the config itself always lists them


def test_problems_are_logged_once(
    dirs: tuple[Path, Path], caplog: pytest.LogCaptureFixture
) -> None:
    home, cwd = dirs
    write(user_file(home), "[]")
    cache = ConfigCache(home, trust_store=home / "trust.json")
    other = cwd / "sub"
    other.mkdir()
    cache.get(cwd)
    cache.get(other)
    cache.get(cwd)
    assert len([r for r in caplog.records if "top level must be a JSON object" in r.message]) == 1


def test_cache_notices_the_legacy_file_and_the_trust_store(dirs: tuple[Path, Path]) -> None:
    home, cwd = dirs
    store = home / "state" / "trust.json"
    cache = ConfigCache(home, trust_store=store)
    first = cache.get(cwd)
    write(legacy_file(home), {"providers": {"cloud": CLOUD}})
    second = cache.get(cwd)
    assert second is not first and "cloud" in second.providers
    write(store, {})
    assert cache.get(cwd) is not second
    assert cache.loaded_files() == [str(legacy_file(home))]


def test_unreadable_file_is_reported_not_fatal(dirs: tuple[Path, Path]) -> None:
    home, cwd = dirs
    path = write(user_file(home), {"providers": {"cloud": CLOUD}})
    path.chmod(0)
    try:
        if os.access(path, os.R_OK):
            pytest.skip("running as a user who can read anything")
        config = load_config(home, cwd)
    finally:
        path.chmod(0o600)
    assert config.builtin
    assert any(p.startswith(f"{path}: cannot read") for p in config.problems)


def test_without_default_provider_fireworks_then_the_first_name(dirs: tuple[Path, Path]) -> None:
    home, cwd = dirs
    fireworks = {**CLOUD, "endpoint": "https://api.fireworks.ai/inference/v1/chat/completions"}
    write(user_file(home), {"providers": {"zeta": CLOUD, "fireworks": fireworks, "alpha": LOCAL}})
    assert load_config(home, cwd).default_provider == "fireworks"
    write(user_file(home), {"providers": {"zeta": CLOUD, "alpha": LOCAL}})
    assert load_config(home, cwd).default_provider == "alpha"
