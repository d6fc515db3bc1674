"""Sending a waiting approval out: the time limit, the desktop choice, the message."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

import pytest

from coding_harness.daemon.sessions import notify
from coding_harness.daemon.sessions.notify import WaitingApproval, desktop_argv, run_limited
from tests.support import waiting


def _waiting(folder: Path, times_out_in: float | None = 50.0) -> WaitingApproval:
    return WaitingApproval(
        session="s-1",
        request="a-1",
        kind="edit",
        path="calc.py",
        summary="fix add",
        folder=folder,
        waited_seconds=10.0,
        times_out_in=times_out_in,
    )


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_command_past_its_limit_is_killed_with_what_it_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(notify, "SEND_LIMIT", 0.5)
    pid_file = tmp_path / "child.pid"
    argv = ["/bin/sh", "-c", f"sleep 60 & echo $! > {pid_file}; cat; sleep 60"]
    with caplog.at_level(logging.WARNING):
        asyncio.run(run_limited(argv, b"{}\n", tmp_path, "notify.command"))
    assert "notify.command: still running after 0.5 s, so it was killed" in caplog.text
    waiting.wait_for(lambda: _gone(int(pid_file.read_text())), "the background sleep to end")


def test_a_failing_command_is_logged_not_raised(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        asyncio.run(run_limited(["/bin/sh", "-c", "echo oops; exit 3"], b"", tmp_path, "cmd"))
        asyncio.run(run_limited([str(tmp_path / "missing")], None, tmp_path, "cmd"))
    assert "cmd: exit status 3; it printed: oops" in caplog.text
    assert "cmd: cannot run" in caplog.text


def test_desktop_auto_needs_a_display_and_off_sends_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "notify-send"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setattr(notify.sys, "platform", "linux")
    monkeypatch.setenv("PATH", str(tmp_path))
    for name in notify.DESKTOP_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    item = _waiting(tmp_path / "proj")
    assert desktop_argv(item, "auto") is None
    assert desktop_argv(item, "off") is None
    assert desktop_argv(item, "on") == [
        str(fake),
        "--app-name=harness",
        item.title(),
        item.message(),
    ]
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    assert desktop_argv(item, "auto") is not None


def test_the_message_names_the_file_the_answer_and_the_time_limit(tmp_path: Path) -> None:
    item = _waiting(tmp_path / "proj")
    assert item.title() == "harness: approval waiting in proj"
    assert item.message() == (
        "calc.py: fix add. Answer with `harness approve s-1`; "
        'unanswered, it counts as "no" in 50 s.'
    )
    assert "waits until answered" in _waiting(tmp_path, None).message()
    assert item.payload()["answer"] == "harness approve s-1"
