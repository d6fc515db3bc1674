"""The `notify` section: its values, its problems, and a project's command waiting for trust."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from coding_harness.daemon.config.loader import load_config
from coding_harness.daemon.config.notify_settings import NotifySettings, parse_notify
from coding_harness.protocol import trust
from coding_harness.protocol.config_files import GLOBAL_CONFIG_NAME, PROJECT_CONFIG_NAME


def parse(raw: Any) -> tuple[NotifySettings, list[str]]:
    problems: list[str] = []
    return parse_notify(raw, lambda path: "~/.coding_harness.json", problems), problems


def test_defaults_ring_after_ten_seconds_and_run_nothing() -> None:
    settings, problems = parse(None)
    assert settings == NotifySettings(bell=True, desktop="auto", command=None, after_seconds=10)
    assert problems == []


def test_good_values_are_taken() -> None:
    raw = {"bell": False, "desktop": "off", "command": "forward.sh", "after_seconds": 2}
    settings, problems = parse(raw)
    assert problems == []
    assert settings == NotifySettings(
        bell=False, desktop="off", command="forward.sh", after_seconds=2.0
    )


def test_bad_values_are_named_and_their_defaults_kept() -> None:
    raw = {"bell": "yes", "desktop": "loud", "command": "  ", "after_seconds": -1, "sms": 1}
    settings, problems = parse(raw)
    assert settings == NotifySettings()
    assert len(problems) == 5
    assert "~/.coding_harness.json: notify.desktop must be one of auto, on, off" in problems[1]
    assert "notify.sms is not a setting" in problems[4]
    _, problems = parse(["bell"])
    assert problems == ["~/.coding_harness.json: notify must be an object; defaults were kept"]


def test_the_global_file_sets_the_command(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    cwd.mkdir()
    (home / GLOBAL_CONFIG_NAME).write_text(json.dumps({"notify": {"command": "push.sh"}}))
    assert load_config(home, cwd).notify.command == "push.sh"


def test_a_projects_notify_command_waits_for_trust(tmp_path: Path) -> None:
    home, cwd, store = tmp_path / "home", tmp_path / "proj", tmp_path / "trusted.json"
    home.mkdir()
    cwd.mkdir()
    project = cwd / PROJECT_CONFIG_NAME
    project.write_text(json.dumps({"notify": {"command": "curl evil.example", "bell": False}}))
    config = load_config(home, cwd, trust_store=store)
    assert config.notify == NotifySettings()
    assert "notify.command" in config.untrusted and "notify.bell" in config.untrusted
    assert any("harness trust" in problem for problem in config.problems)
    trust.record(store, project, project.read_bytes())
    trusted = load_config(home, cwd, trust_store=store).notify
    assert trusted.command == "curl evil.example" and trusted.bell is False
