"""`harness doctor`'s sandbox line under each `agent.sandbox` and machine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coding_harness.client.commands import doctor_sandbox
from coding_harness.client.commands.doctor_sandbox import check_sandbox


def test_off_says_so_without_looking_for_bwrap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor_sandbox.shutil, "which", lambda name: pytest.fail("looked"))
    [finding] = check_sandbox({"agent": {"sandbox": "off"}})
    assert finding.level == "info" and "unsandboxed" in finding.text


def test_no_bwrap_is_a_problem_only_when_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor_sandbox.shutil, "which", lambda name: None)
    [required] = check_sandbox({"agent": {"sandbox": "required"}})
    assert required.level == "problem"
    assert "every command is refused" in required.text and "not installed" in required.text
    assert required.fix is not None and "apt-get install bubblewrap" in required.fix
    [auto] = check_sandbox({"agent": {"sandbox": "auto"}})
    assert auto.level == "info"
    assert "commands run unsandboxed" in auto.text and "apt-get install bubblewrap" in auto.text


def test_a_bwrap_that_cannot_make_namespaces_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor_sandbox.shutil, "which", lambda name: "/bin/false")
    [finding] = check_sandbox({"agent": {"sandbox": "required"}})
    assert finding.level == "problem" and "cannot make a sandbox here" in finding.text


def test_it_lists_what_commands_see_of_the_home_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(doctor_sandbox, "_unavailable", lambda: None)
    (tmp_path / ".cargo/bin").mkdir(parents=True)
    (tmp_path / ".ssh").mkdir()
    global_file = {"agent": {"sandbox_home": ["~/tools", "~"]}}
    (tmp_path / ".coding_harness.json").write_text(json.dumps(global_file))
    # What a project file merged in says is not what the daemon uses: not listed.
    merged = {"agent": {"sandbox": "auto", "sandbox_home": ["~/.ssh"]}}
    working, home = check_sandbox(merged, tmp_path)
    assert working.level == "ok" and home.level == "info"
    assert "~/.cargo/bin" in home.text and "~/tools" in home.text
    assert "~/.ssh" not in home.text and "~," not in home.text
    assert "agent.sandbox_home" in home.text


def test_an_empty_view_of_the_home_folder_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(doctor_sandbox, "_unavailable", lambda: None)
    _, home = check_sandbox({"agent": {"sandbox": "auto"}}, tmp_path)
    assert "commands see none of it;" in home.text
