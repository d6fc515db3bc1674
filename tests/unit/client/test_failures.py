"""What escapes a command becomes one line and the contract's exit code."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from coding_harness.client import failures
from coding_harness.protocol import errors, exit_codes
from coding_harness.protocol.client import DaemonUnreachable


def raising(exc: BaseException) -> Callable[[], int]:
    def body() -> int:
        raise exc

    return body


@pytest.mark.parametrize(
    ("exc", "code", "line"),
    [
        (DaemonUnreachable("daemon connection lost"), 4, "cannot reach the daemon: daemon"),
        (errors.ServerBusy("close some clients"), 4, "close some clients"),
        (errors.UnsupportedProtocol("protocol 2 only"), 4, "protocol 2 only"),
        (errors.SessionNotFound("no session 'x'"), 5, "no session 'x'"),
        (errors.InvalidParams("invalid text"), 5, "invalid text"),
        (errors.InternalError("see the daemon log"), 1, "see the daemon log"),
        (UnicodeEncodeError("utf-8", "x\udcff", 1, 2, "surrogates not allowed"), 5, "UTF-8"),
        (RecursionError("maximum recursion depth exceeded"), 5, "nested too deeply"),
        (
            PermissionError(13, "Permission denied", "/h/.coding_agent_history"),
            1,
            "cannot use /h/.coding_agent_history (Permission denied)",
        ),
    ],
)
def test_each_failure_is_one_line_and_its_exit_code(
    capsys: pytest.CaptureFixture[str], exc: BaseException, code: int, line: str
) -> None:
    assert failures.run_guarded(raising(exc)) == code
    err = capsys.readouterr().err
    assert err.startswith("harness: ") and line in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_debug_adds_the_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    code = failures.run_guarded(raising(errors.InternalError("boom")), debug=True)
    assert code == exit_codes.MODEL_ERROR
    err = capsys.readouterr().err
    assert "Traceback" in err and err.strip().endswith("harness: boom")


def test_ctrl_c_is_130_and_silent(capsys: pytest.CaptureFixture[str]) -> None:
    assert failures.run_guarded(raising(KeyboardInterrupt())) == exit_codes.INTERRUPTED
    assert capsys.readouterr().err == ""


def test_a_bug_still_shows_its_traceback() -> None:
    with pytest.raises(ZeroDivisionError):
        failures.run_guarded(lambda: 1 // 0)


def test_a_file_in_the_state_folder_is_named_with_the_state_fix(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    store = tmp_path / "coding-harness" / "trusted.json"
    code = failures.run_guarded(raising(PermissionError(13, "Permission denied", str(store))))
    assert code == exit_codes.MODEL_ERROR
    err = capsys.readouterr().err
    assert f"cannot write to the state folder {tmp_path / 'coding-harness'}" in err
    assert "XDG_STATE_HOME" in err
