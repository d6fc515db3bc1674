"""`/allow-cmd ... --save` writes the global config file, keeping everything else."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from coding_harness.client.repl.allow_command import NotSaved, save_allowance


def test_a_missing_file_is_made_private(tmp_path: Path) -> None:
    path = tmp_path / ".coding_harness.json"
    assert save_allowance(path, "git log") is True
    assert json.loads(path.read_text()) == {"agent": {"allow_commands": ["git log"]}}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_other_keys_stay_and_an_entry_is_saved_once(tmp_path: Path) -> None:
    path = tmp_path / ".coding_harness.json"
    path.write_text(json.dumps({"default_provider": "x", "agent": {"mode": "ask"}}))
    assert save_allowance(path, "git log") is True
    assert save_allowance(path, "git log") is False
    assert save_allowance(path, "git diff") is True
    assert json.loads(path.read_text()) == {
        "default_provider": "x",
        "agent": {"mode": "ask", "allow_commands": ["git log", "git diff"]},
    }


def test_a_link_is_followed(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "harness.json"
    real.parent.mkdir()
    real.write_text("{}")
    link = tmp_path / ".coding_harness.json"
    link.symlink_to(real)
    save_allowance(link, "cargo")
    assert link.is_symlink() and json.loads(real.read_text())["agent"]["allow_commands"] == [
        "cargo"
    ]


@pytest.mark.parametrize("text", ["{not json", "[1]", '{"agent": 3}'])
def test_a_file_it_cannot_read_is_left_alone(tmp_path: Path, text: str) -> None:
    path = tmp_path / ".coding_harness.json"
    path.write_text(text)
    with pytest.raises(NotSaved, match="fix"):
        save_allowance(path, "git log")
    assert path.read_text() == text
