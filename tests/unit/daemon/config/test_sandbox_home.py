"""`agent.sandbox_home`: folders of the home folder the command sandbox shows,
which only the user's global file may add (a trusted project file may not)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coding_harness.daemon.config.loader import load_config
from coding_harness.protocol import trust
from coding_harness.protocol.config_files import GLOBAL_CONFIG_NAME, PROJECT_CONFIG_NAME


def _write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def test_the_global_file_adds_folders(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    cwd.mkdir()
    _write(home / GLOBAL_CONFIG_NAME, {"agent": {"sandbox_home": ["~/.m2", "/opt/sdk"]}})
    config = load_config(home, cwd, trust_store=tmp_path / "store.json")
    assert config.agent.sandbox_home == ("~/.m2", "/opt/sdk")
    assert config.problems == ()


@pytest.mark.parametrize("trusted", [False, True])
def test_a_project_file_may_not_add_any_even_when_trusted(tmp_path: Path, trusted: bool) -> None:
    home, cwd, store = tmp_path / "home", tmp_path / "proj", tmp_path / "store.json"
    _write(home / GLOBAL_CONFIG_NAME, {"agent": {"sandbox_home": ["~/.m2"]}})
    project = _write(cwd / PROJECT_CONFIG_NAME, {"agent": {"sandbox_home": ["~/.ssh"]}})
    if trusted:
        trust.record(store, project, project.read_bytes())
    config = load_config(home, cwd, trust_store=store)
    assert config.agent.sandbox_home == ("~/.m2",)
    [said] = config.problems
    assert "agent.sandbox_home ignored, trusted or not" in said
    assert str(project) in said
    assert config.untrusted == ()


@pytest.mark.parametrize("value", ["~/.m2", ["relative/dir"], ["~"], ["~/"], [3]])
def test_what_is_not_a_list_of_folders_is_refused(tmp_path: Path, value: object) -> None:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    cwd.mkdir()
    _write(home / GLOBAL_CONFIG_NAME, {"agent": {"sandbox_home": value}})
    config = load_config(home, cwd, trust_store=tmp_path / "store.json")
    assert config.agent.sandbox_home == ()
    [said] = config.problems
    assert "agent.sandbox_home" in said and "must be a list of folders" in said
