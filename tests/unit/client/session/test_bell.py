"""The bell of a waiting approval: its settings, BEL on a terminal only, once per request."""

from __future__ import annotations

import io
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import pytest

from coding_harness.client.render.style import Style
from coding_harness.client.session import bell
from coding_harness.client.session.approval_prompt import ask
from coding_harness.client.session.bell import BellSettings, Reminder, bell_settings, ring
from coding_harness.protocol import trust
from coding_harness.protocol.config_files import GLOBAL_CONFIG_NAME, PROJECT_CONFIG_NAME
from tests.support import waiting


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    cwd.mkdir()
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return home, cwd


@pytest.fixture
def tty(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[int, TextIO]]:
    """A pty: the end the terminal reads, and a stream on the other end. Standard error
    is made the stream in the test itself (pytest sets it again between the phases)."""
    reader, writer = os.openpty()
    stream = os.fdopen(writer, "w")
    try:
        yield reader, stream
    finally:
        stream.close()
        os.close(reader)


def test_settings_come_from_the_users_file_and_a_trusted_project(dirs: tuple[Path, Path]) -> None:
    home, cwd = dirs
    assert bell_settings(cwd, home, env={}) == BellSettings(ring=True, after_seconds=10.0)
    (home / GLOBAL_CONFIG_NAME).write_text(json.dumps({"notify": {"after_seconds": 2}}))
    project = cwd / PROJECT_CONFIG_NAME
    project.write_text(json.dumps({"notify": {"bell": False, "after_seconds": 900}}))
    assert bell_settings(cwd, home, env={}) == BellSettings(ring=True, after_seconds=2.0)
    trust.record(trust.store_path(), project, project.read_bytes())
    assert bell_settings(cwd, home, env={}) == BellSettings(ring=False, after_seconds=900.0)


def test_the_variable_turns_the_bell_off(dirs: tuple[Path, Path]) -> None:
    home, cwd = dirs
    for value in ("off", "0", "False", "no"):
        assert not bell_settings(cwd, home, env={"CODING_HARNESS_BELL": value}).ring
    assert bell_settings(cwd, home, env={"CODING_HARNESS_BELL": "on"}).ring


def test_bel_goes_to_a_terminal_only(
    tty: tuple[int, TextIO], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bell.sys, "stderr", tty[1])
    assert ring(BellSettings())
    assert os.read(tty[0], 16) == b"\a"
    assert not ring(BellSettings(ring=False))
    monkeypatch.setattr(bell.sys, "stderr", io.StringIO())
    monkeypatch.setattr(bell.sys, "stdout", io.StringIO())
    assert not ring(BellSettings())


def test_a_request_answered_before_its_timer_fires_is_not_reminded() -> None:
    due: list[dict[str, Any]] = []
    reminder = Reminder(BellSettings(ring=False, after_seconds=60), due.append)
    reminder.requested({"request": "a-1"})
    reminder.resolved("a-1")
    reminder._fire("a-1", {"request": "a-1"})  # the timer raced the answer
    assert due == []
    reminder.requested({"request": "a-2"})
    reminder._fire("a-2", {"request": "a-2"})
    reminder._fire("a-2", {"request": "a-2"})
    assert due == [{"request": "a-2"}]  # once
    reminder.clear()


def test_the_question_rings_and_says_it_still_waits(
    tty: tuple[int, TextIO], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bell.sys, "stderr", tty[1])
    out = io.StringIO()
    noted = threading.Event()

    def read_line() -> str:
        waiting.wait_for(lambda: "still waiting" in out.getvalue(), "the reminder", within=10)
        noted.set()
        return "y\n"

    answer = ask(Style(out), read_line=read_line, bell=BellSettings(after_seconds=0), session="s-1")
    assert answer == ("yes", "")
    assert noted.is_set() and os.read(tty[0], 16) == b"\a"
    assert "an approval in session s-1 is still waiting for your answer" in out.getvalue()
