"""`hub`: the team's PostgreSQL database, which only the user's global file may name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coding_harness.daemon.config.loader import load_config
from coding_harness.protocol import trust
from coding_harness.protocol.config_files import GLOBAL_CONFIG_NAME, PROJECT_CONFIG_NAME

URL = "postgresql://ann@db.example/team"


def _write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def _load(tmp_path: Path, hub: object) -> object:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    cwd.mkdir(exist_ok=True)
    _write(home / GLOBAL_CONFIG_NAME, {"hub": hub})
    return load_config(home, cwd, trust_store=tmp_path / "store.json")


def test_without_a_hub_nothing_changes(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    cwd.mkdir()
    config = load_config(home, cwd, trust_store=tmp_path / "store.json")
    assert config.hub is None


def test_the_global_file_names_the_hub_and_the_runner(tmp_path: Path) -> None:
    config = _load(
        tmp_path,
        {
            "url": URL,
            "name": "team-a",
            "password_env": "HUB_PASSWORD",
            "person": "ann",
            "runner": {"name": "laptop", "slots": 2, "repos": ["https://x/r.git"], "push": True},
            "approvers": ["bob@desk"],
        },
    )
    hub = config.hub  # type: ignore[attr-defined]
    assert hub.url == URL and hub.name == "team-a" and hub.password_env == "HUB_PASSWORD"
    assert hub.runner.name == "laptop" and hub.runner.slots == 2 and hub.runner.push
    assert hub.runner.accepts("https://x/r.git") and not hub.runner.accepts("https://x/other")
    assert hub.may_approve("ann") and hub.may_approve("bob@desk")
    assert not hub.may_approve("eve@elsewhere")
    assert config.problems == ()  # type: ignore[attr-defined]


def test_defaults_the_person_and_takes_no_queued_work(tmp_path: Path) -> None:
    hub = _load(tmp_path, {"url": URL}).hub  # type: ignore[attr-defined]
    assert "@" in hub.person and hub.runner.slots == 0 and hub.runner.repos == ()
    assert not hub.runner.accepts("https://x/r.git")


@pytest.mark.parametrize(
    ("hub", "said"),
    [
        ("postgresql://x", "hub must be an object"),
        ({"name": "x"}, "hub.url must be a PostgreSQL connection string"),
        ({"url": URL, "runner": {"slots": -1}}, "hub.runner.slots must be a whole number"),
        ({"url": URL, "approvers": "bob"}, "hub.approvers must be a list of strings"),
    ],
)
def test_a_bad_value_is_named_with_its_file(tmp_path: Path, hub: object, said: str) -> None:
    config = _load(tmp_path, hub)
    problems = " ".join(config.problems)  # type: ignore[attr-defined]
    assert said in problems and GLOBAL_CONFIG_NAME in problems


@pytest.mark.parametrize("trusted", [False, True])
def test_a_project_file_can_never_name_a_hub(tmp_path: Path, trusted: bool) -> None:
    home, cwd, store = tmp_path / "home", tmp_path / "proj", tmp_path / "store.json"
    _write(home / GLOBAL_CONFIG_NAME, {})
    project = _write(cwd / PROJECT_CONFIG_NAME, {"hub": {"url": "postgresql://evil/x"}})
    if trusted:
        trust.record(store, project, project.read_bytes())
    config = load_config(home, cwd, trust_store=store)
    assert config.hub is None
    assert any("hub ignored, trusted or not" in p for p in config.problems)
