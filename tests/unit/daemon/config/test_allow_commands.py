"""`agent.allow_commands`: what runs without a question in every session, which only
the user's global file may set (a project may never widen what runs, issue 26.15)."""

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


def test_the_global_file_sets_them(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    cwd.mkdir()
    _write(home / GLOBAL_CONFIG_NAME, {"agent": {"allow_commands": ["git  log", "uv run"]}})
    config = load_config(home, cwd, trust_store=tmp_path / "store.json")
    assert config.agent.allow_commands == ("git log", "uv run")
    assert config.problems == ()


@pytest.mark.parametrize("trusted", [False, True])
def test_a_project_file_may_not_add_any_even_when_trusted(tmp_path: Path, trusted: bool) -> None:
    home, cwd, store = tmp_path / "home", tmp_path / "proj", tmp_path / "store.json"
    _write(home / GLOBAL_CONFIG_NAME, {"agent": {"allow_commands": ["git log"]}})
    project = _write(cwd / PROJECT_CONFIG_NAME, {"agent": {"allow_commands": ["rm", "make"]}})
    if trusted:
        trust.record(store, project, project.read_bytes())
    config = load_config(home, cwd, trust_store=store)
    assert config.agent.allow_commands == ("git log",)
    [said] = config.problems
    assert "agent.allow_commands ignored, trusted or not" in said


@pytest.mark.parametrize("value", ["git log", ["git log -p"], [3], [""]])
def test_what_is_not_a_list_of_commands_is_refused(tmp_path: Path, value: object) -> None:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    cwd.mkdir()
    _write(home / GLOBAL_CONFIG_NAME, {"agent": {"allow_commands": value}})
    config = load_config(home, cwd, trust_store=tmp_path / "store.json")
    assert config.agent.allow_commands == ()
    assert "agent.allow_commands" in config.problems[0]
