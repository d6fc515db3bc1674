"""run_process: output capture, caps, secrets kept out, and killing whole groups,
including what left the group (`setsid`)."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

from coding_harness.daemon.tools.shell.process import (
    OutputCapture,
    run_process,
    shorten,
    tool_environment,
)
from coding_harness.daemon.tools.shell.process_tree import MARKER
from tests.support.tool_context import process_gone, read_pid, run, wait_for_file

# A recipe that leaves a background sleep holding the output pipe, and records the pids.
SLEEPY_MAKEFILE = (
    "check:\n"
    "\tsleep 1000 & echo $$! > bg.pid; echo $$$$ > sh.pid; sleep 1000\n"
    "linger:\n"
    "\tsleep 1000 & echo $$! > bg.pid\n"
    "\tsleep 1000 >/dev/null 2>&1 & echo $$! > quiet.pid\n"
    "\t@echo done\n"
    # A helper that leaves the process group and its parent shell.
    "escape:\n"
    "\tsetsid sh -c 'sleep 1000 & echo $$! > escaped.pid' &\n"
    "\tfor i in $$(seq 100); do [ -s escaped.pid ] && break; sleep 0.05; done\n"
    "escape-and-wait: escape\n"
    "\techo $$$$ > sh.pid; sleep 1000\n"
)


@pytest.fixture
def sleepy(tmp_path: Path) -> Path:
    (tmp_path / "Makefile").write_text(SLEEPY_MAKEFILE)
    return tmp_path


def test_output_and_exit_code(tmp_path: Path) -> None:
    code = "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"
    result = run(run_process([sys.executable, "-c", code], tmp_path, 10))
    assert result.exit_code == 3
    assert not result.timed_out
    assert "out\n" in result.output
    assert "err\n" in result.output


def test_missing_program_is_a_result(tmp_path: Path) -> None:
    result = run(run_process(["no-such-program-xyz"], tmp_path, 10))
    assert result.exit_code == 127
    assert "cannot run no-such-program-xyz" in result.output


def test_invalid_utf8_is_replaced(tmp_path: Path) -> None:
    code = "import sys; sys.stdout.buffer.write(b'ok \\xff\\xfe end')"
    result = run(run_process([sys.executable, "-c", code], tmp_path, 10))
    assert result.output == "ok \ufffd\ufffd end"


def test_output_cap_keeps_head_and_tail(tmp_path: Path) -> None:
    code = "print('HEAD' + 'x' * 100000 + 'TAIL')"
    result = run(run_process([sys.executable, "-c", code], tmp_path, 10, output_cap=200))
    assert result.output.startswith("HEAD")
    assert result.output.rstrip().endswith("TAIL")
    assert "... 99809 characters omitted ..." in result.output
    assert len(result.output) < 300


def test_capture_counts_characters_not_bytes() -> None:
    capture = OutputCapture(10)
    for _ in range(100):
        capture.feed("é".encode())
    text = capture.text()
    assert text.startswith("ééééé\n")
    assert "... 90 characters omitted ..." in text
    assert shorten("abc", 10) == "abc"


def test_children_get_an_allow_listed_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-leak")
    monkeypatch.setenv("DATABASE_URL", "postgres://u:pw-leak@db/x")
    monkeypatch.setenv("MY_CREDENTIALS", "cred-leak")
    monkeypatch.setenv("MAKEFLAGS", "--eval=leak")
    monkeypatch.setenv("LC_TIME", "C")
    result = run(run_process(["env"], tmp_path, 10))
    assert "leak" not in result.output
    assert "LC_TIME=C" in result.output
    assert f"HOME={os.environ['HOME']}" in result.output


def test_passed_variables_are_added_and_secret_names_dropped_whatever_they_are() -> None:
    base = {"PATH": "/bin", "MODEL_PASS": "hunter22", "PROJECT_MODE": "dev", "VIRTUAL_ENV": "/v"}
    env = tool_environment(
        drop={"MODEL_PASS", "VIRTUAL_ENV"}, passed=("PROJECT_MODE", "MODEL_PASS"), base=base
    )
    assert env == {"PATH": "/bin", "PROJECT_MODE": "dev"}


def test_timeout_kills_the_group_including_background_sleep(sleepy: Path) -> None:
    started = time.monotonic()
    result = run(run_process(["make", "check"], sleepy, 1.0))
    assert time.monotonic() - started < 4
    assert result.timed_out
    assert result.exit_code is None
    for pid_file in ("bg.pid", "sh.pid"):
        assert process_gone(read_pid(sleepy / pid_file))


def test_leftover_background_process_does_not_hold_the_result(sleepy: Path) -> None:
    started = time.monotonic()
    result = run(run_process(["make", "linger"], sleepy, 30))
    assert time.monotonic() - started < 3
    assert result.exit_code == 0
    assert not result.timed_out
    assert "done" in result.output
    for pid_file in ("bg.pid", "quiet.pid"):  # holding the pipe or not
        assert process_gone(read_pid(sleepy / pid_file))


def test_cancellation_kills_the_group_and_propagates(sleepy: Path) -> None:
    async def scenario() -> None:
        task = asyncio.create_task(run_process(["make", "check"], sleepy, 60))
        await wait_for_file(sleepy / "sh.pid")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    started = time.monotonic()
    run(scenario())
    assert time.monotonic() - started < 4
    for pid_file in ("bg.pid", "sh.pid"):
        assert process_gone(read_pid(sleepy / pid_file))


def test_an_outer_make_cannot_steer_the_agents_make(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A daemon started from `make` (or with MAKEFLAGS set) must not pass it on."""
    (tmp_path / "evil.mk").write_text("check:\n\t@echo EVIL\n")
    (tmp_path / "Makefile").write_text("check:\n\t@echo checking\n")
    monkeypatch.setenv("MAKEFLAGS", "-f evil.mk")
    monkeypatch.setenv("MAKELEVEL", "1")
    monkeypatch.setenv("MAKEFILES", "evil.mk")
    result = run(run_process(["make", "check"], tmp_path, 10))
    assert result.output == "checking\n"


def test_a_process_that_left_the_group_ends_with_the_command(sleepy: Path) -> None:
    result = run(run_process(["make", "escape"], sleepy, 30))
    assert result.exit_code == 0, result.output
    assert process_gone(read_pid(sleepy / "escaped.pid"))


def test_cancellation_ends_what_left_the_group_too(sleepy: Path) -> None:
    async def scenario() -> None:
        task = asyncio.create_task(run_process(["make", "escape-and-wait"], sleepy, 60))
        await wait_for_file(sleepy / "sh.pid")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(scenario())
    for pid_file in ("escaped.pid", "sh.pid"):
        assert process_gone(read_pid(sleepy / pid_file))


def test_each_command_carries_its_own_marker(tmp_path: Path) -> None:
    first = run(run_process(["env"], tmp_path, 10)).output
    second = run(run_process(["env"], tmp_path, 10)).output
    [one] = [line for line in first.splitlines() if line.startswith(f"{MARKER}=")]
    [two] = [line for line in second.splitlines() if line.startswith(f"{MARKER}=")]
    assert one != two


def test_standard_input_is_empty(tmp_path: Path) -> None:
    code = "import sys; print(repr(sys.stdin.read()))"
    result = run(run_process([sys.executable, "-c", code], tmp_path, 10))
    assert result.output == "''\n"


def test_endless_output_is_capped_and_stopped_at_the_timeout(tmp_path: Path) -> None:
    result = run(run_process(["yes"], tmp_path, 1.0, output_cap=1000))
    assert result.timed_out
    assert result.output.startswith("y\ny\n")
    assert "characters omitted" in result.output
    assert len(result.output) < 1100
