"""Bad input and a bad environment get one line naming the fix, never a traceback.

Each case runs the installed `harness` or `harnessd` command as a process,
standard input at /dev/null unless the case is about standard input, with
file permissions enforced even when the tests run as root
(tests/support/commands.py). Exit codes are the contract's: 4 when the daemon
cannot be started or reached, 5 for bad input; `harnessd` exits 78 for a
problem a restart cannot fix and 5 for bad arguments.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.integration.conftest import Sandbox
from tests.support.commands import BIN, run_command
from tests.support.fake_model_server import FakeModelServer, Reply

NOT_UTF8 = os.fsdecode(b"ok\xff")  # what Python makes of the bytes b"ok\xff" in argv


def harness(
    sandbox: Sandbox, *args: str, input: bytes | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return run_command(
        "harness", list(args), env=sandbox.env, cwd=cwd or sandbox.workspace, input=input
    )


def harnessd(sandbox: Sandbox, *args: str) -> subprocess.CompletedProcess[str]:
    socket_args = ["--socket", str(sandbox.socket)]
    return run_command("harnessd", [*socket_args, *args], env=sandbox.env, cwd=sandbox.root)


def one_line(result: subprocess.CompletedProcess[str], code: int, *words: str) -> str:
    """The single line on standard error, checked for the exit code and `words`."""
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == code, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


# -- bad input: exit 5, nothing sent, no daemon started ---------------------


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["-p", NOT_UTF8], "the -p text"),
        ([NOT_UTF8, "please"], "prompt word 1"),
        (["--model", NOT_UTF8, "-p", "hi"], "--model"),
    ],
)
def test_a_prompt_or_flag_that_is_not_utf8_is_refused_naming_the_byte(
    sandbox: Sandbox, args: list[str], named: str
) -> None:
    result = harness(sandbox, *args)
    one_line(result, 5, named, "not valid UTF-8", "byte 0xff at offset 2", "iconv")
    assert not sandbox.socket.exists()


@pytest.mark.parametrize("flags", [["--stdin"], []], ids=["--stdin", "piped"])
def test_standard_input_that_is_not_utf8_is_refused_naming_offset_and_line(
    sandbox: Sandbox, flags: list[str]
) -> None:
    result = harness(sandbox, *flags, input=b"line one\nbad \xfe here\n")
    one_line(result, 5, "standard input", "byte 0xfe at offset 13, line 2")
    assert not sandbox.socket.exists()


def test_a_prompt_over_the_message_limit_is_refused(sandbox: Sandbox) -> None:
    result = harness(sandbox, "--stdin", input=b"a" * (17 * 1024 * 1024))
    one_line(result, 5, "MiB", "send a smaller part")
    assert not sandbox.socket.exists()


def test_a_folder_name_that_is_not_utf8_is_refused(sandbox: Sandbox) -> None:
    folder = Path(os.fsdecode(bytes(sandbox.workspace) + b"/caf\xe9"))
    folder.mkdir()
    result = harness(sandbox, "-p", "hi", cwd=folder)
    one_line(result, 5, "folder name", "caf\\xe9", "byte 0xe9", "--cwd")


def test_a_current_folder_that_was_removed_is_refused(sandbox: Sandbox) -> None:
    gone = sandbox.workspace / "gone"
    gone.mkdir()
    result = subprocess.run(
        ["sh", "-c", 'rmdir "$PWD" && exec "$@"', "sh", str(BIN / "harness"), "-p", "hi"],
        env={**sandbox.env, "NO_COLOR": "1"},
        cwd=gone,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )
    one_line(result, 5, "no longer exists", "--cwd")


# -- standard streams -------------------------------------------------------


def test_a_closed_standard_input_is_read_as_empty(sandbox: Sandbox, model: FakeModelServer) -> None:
    model.add(Reply(content="hello"))
    result = subprocess.run(
        ["sh", "-c", 'exec "$@" <&-', "sh", str(BIN / "harness"), "-q", "-p", "hi"],
        env={**sandbox.env, "NO_COLOR": "1"},
        cwd=sandbox.workspace,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 0, result.stderr
    assert "hello" in result.stdout


def test_a_reply_the_output_encoding_cannot_spell_is_escaped(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    model.add(Reply(content="café ✓"))
    env = {**sandbox.env, "PYTHONIOENCODING": "ascii"}
    result = run_command("harness", ["-q", "-p", "hi"], env=env, cwd=sandbox.workspace)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 0, result.stderr
    assert "caf\\xe9 \\u2713" in result.stdout


def test_a_reader_that_goes_away_ends_the_command_quietly(sandbox: Sandbox) -> None:
    log = sandbox.root / "state" / "coding-harness" / "daemon.log"
    log.parent.mkdir(parents=True)
    log.write_text("".join(f"line {n}\n" for n in range(100_000)))
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first byte
    try:
        result = subprocess.run(
            [str(BIN / "harness"), "daemon", "logs", "-n", "100000"],
            env=sandbox.env,
            stdin=subprocess.DEVNULL,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=30,
        )
    finally:
        os.close(write_end)
    assert result.stderr == ""
    assert result.returncode == 141  # as a shell reports a tool ended by SIGPIPE


# -- an unusable state folder: harness exits 4, harnessd 78 -----------------


def _read_only_state(sandbox: Sandbox) -> Path:
    state = sandbox.root / "state"
    state.mkdir(mode=0o500)
    return state


def _read_only_home(sandbox: Sandbox) -> Path:
    del sandbox.env["XDG_STATE_HOME"]
    sandbox.home.chmod(0o500)
    return sandbox.home


def _state_is_a_file(sandbox: Sandbox) -> Path:
    state = sandbox.root / "state"
    state.write_text("")
    return state


@pytest.mark.parametrize(
    ("spoil", "reason"),
    [
        (_read_only_state, "Permission denied"),
        (_read_only_home, "Permission denied"),
        (_state_is_a_file, "Not a directory"),
    ],
    ids=["read-only XDG_STATE_HOME", "read-only HOME", "XDG_STATE_HOME is a file"],
)
def test_an_unusable_state_folder_is_named_with_the_fix(
    sandbox: Sandbox, spoil, reason: str
) -> None:
    spoiled = spoil(sandbox)
    try:
        for args in (["-p", "hi"], ["daemon", "start"]):
            line = one_line(harness(sandbox, *args), 4, "state folder", reason, "XDG_STATE_HOME")
            assert str(spoiled) in line
        one_line(harnessd(sandbox), 78, "harnessd:", "state folder", reason, "XDG_STATE_HOME")
    finally:
        spoiled.chmod(0o700)
    assert not sandbox.socket.exists()


def test_a_log_that_cannot_be_written_or_read_is_named(sandbox: Sandbox) -> None:
    log = sandbox.root / "state" / "coding-harness" / "daemon.log"
    log.mkdir(parents=True)
    one_line(harnessd(sandbox), 78, "daemon.log", "Is a directory", "XDG_STATE_HOME")
    for args in (["daemon", "logs"], ["daemon", "logs", "-f"]):
        one_line(harness(sandbox, *args), 1, f"cannot read {log}", "Is a directory")
    log.rmdir()
    log.write_text("a line\n")
    log.chmod(0o000)
    one_line(harness(sandbox, "daemon", "logs"), 1, "Permission denied")


@pytest.mark.parametrize(
    "content",
    [
        b"\xff\xfe",
        b"[" * 100_000,
        b'{"pid": 99999999999999999999999, "socket": "s", "version": "1", "started_at": 1}',
    ],
    ids=["not UTF-8", "nested too deep", "pid too large"],
)
def test_a_damaged_discovery_record_does_not_break_status(sandbox: Sandbox, content: bytes) -> None:
    record = sandbox.root / "state" / "coding-harness" / "harnessd.json"
    record.parent.mkdir(parents=True)
    record.write_bytes(content)
    result = harness(sandbox, "daemon", "status")
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 4
    assert "harnessd is not running" in result.stdout


def test_trust_names_a_state_folder_it_cannot_write(sandbox: Sandbox) -> None:
    (sandbox.workspace / ".local_coding_harness.json").write_text("{}")
    state = _read_only_state(sandbox)
    try:
        result = harness(sandbox, "trust", input=b"y\n")
    finally:
        state.chmod(0o700)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]  # after the question it asked
    assert last.startswith(f"harness: cannot write to the state folder {state}"), last
    assert "XDG_STATE_HOME" in last


def test_trust_of_a_project_file_nested_too_deep_is_one_line(sandbox: Sandbox) -> None:
    (sandbox.workspace / ".local_coding_harness.json").write_text("[" * 100_000)
    one_line(harness(sandbox, "trust"), 1, "nested too deeply", "fix it first")


# -- the socket path --------------------------------------------------------


def test_a_folder_at_the_socket_path_is_named_and_left_alone(sandbox: Sandbox) -> None:
    sandbox.socket.mkdir(parents=True)
    sandbox.socket.parent.chmod(0o700)
    one_line(harness(sandbox, "-p", "hi"), 4, str(sandbox.socket), "is a folder, not a socket")
    one_line(harnessd(sandbox), 78, "is a folder, not a socket", "CODING_HARNESS_SOCKET")
    status = harness(sandbox, "daemon", "status")
    assert status.returncode == 4
    assert f"note: {sandbox.socket} is a folder, not a socket" in status.stdout
    doctor = harness(sandbox, "doctor")
    assert f"PROBLEM  {sandbox.socket} is a folder, not a socket" in doctor.stdout
    assert "chmod 600" not in doctor.stdout
    assert sandbox.socket.is_dir()


def test_a_file_at_the_socket_path_is_never_deleted(sandbox: Sandbox) -> None:
    sandbox.socket.parent.mkdir(mode=0o700)
    sandbox.socket.write_text("my notes")
    one_line(harnessd(sandbox), 78, "is a file, not a socket", "CODING_HARNESS_SOCKET")
    assert sandbox.socket.read_text() == "my notes"


def test_a_socket_folder_that_cannot_be_used_is_named_with_the_fix(sandbox: Sandbox) -> None:
    sandbox.socket.parent.mkdir(mode=0o500)
    try:
        one_line(harness(sandbox, "-p", "hi"), 4, "mode 500", f"chmod 700 {sandbox.socket.parent}")
    finally:
        sandbox.socket.parent.chmod(0o700)
    locked = sandbox.root / "locked"
    locked.mkdir(mode=0o500)
    sandbox.env["CODING_HARNESS_SOCKET"] = str(locked / "run" / "harnessd.sock")
    try:
        one_line(harness(sandbox, "-p", "hi"), 4, f"cannot create the folder {locked / 'run'}")
    finally:
        locked.chmod(0o700)


def _open_folder(sandbox: Sandbox) -> str:
    sandbox.socket.parent.mkdir(mode=0o755)
    sandbox.socket.parent.chmod(0o755)
    return f"chmod 700 {sandbox.socket.parent}"


def _linked_folder(sandbox: Sandbox) -> str:
    real = sandbox.root / "elsewhere"
    real.mkdir(mode=0o700)
    sandbox.socket.parent.symlink_to(real)
    return "is a symbolic link; remove it"


def _long_path(sandbox: Sandbox) -> str:
    sandbox.env["CODING_HARNESS_SOCKET"] = str(sandbox.root / ("x" * 120) / "harnessd.sock")
    return "107-byte limit"


@pytest.mark.parametrize("spoil", [_open_folder, _linked_folder, _long_path])
def test_socket_folders_the_daemon_refuses_still_read_in_one_line(sandbox: Sandbox, spoil) -> None:
    """RELIABILITY items 2 and 8, kept by this change: refused, exit 4, nothing made."""
    fix = spoil(sandbox)
    one_line(harness(sandbox, "-p", "hi"), 4, fix)
    one_line(harnessd(sandbox, "--socket", sandbox.env["CODING_HARNESS_SOCKET"]), 78, fix)
    assert not sandbox.socket.exists()


# -- harnessd's own arguments -----------------------------------------------


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--drain-seconds", "soon"], ("--drain-seconds", "'soon' is not a number of seconds")),
        (["--self-check-seconds", "0"], ("--self-check-seconds", "more than 0")),
        (["--drain-seconds", "nan"], ("--drain-seconds",)),
        (["--bogus"], ("unrecognized arguments: --bogus",)),
    ],
)
def test_harnessd_bad_arguments_exit_5_in_one_line(
    sandbox: Sandbox, args: list[str], words: tuple[str, ...]
) -> None:
    one_line(harnessd(sandbox, *args), 5, "harnessd:", "see harnessd --help", *words)


def test_harnessd_under_a_service_manager_still_reads_its_arguments(sandbox: Sandbox) -> None:
    """`--help` and `--version` still print and exit 0 through the stricter parser."""
    for flag, word in (("--help", "--drain-seconds"), ("--version", "harnessd ")):
        result = harnessd(sandbox, flag)
        assert result.returncode == 0, result.stderr
        assert word in result.stdout


# -- config files the daemon and doctor read --------------------------------


def _unreadable(path: Path) -> None:
    path.write_text("{}")
    path.chmod(0o000)


def _not_utf8(path: Path) -> None:
    path.write_bytes(b'{"quiet": "\xff"}')


@pytest.mark.parametrize(
    ("spoil", "words"),
    [(_unreadable, "cannot read"), (_not_utf8, "not valid JSON")],
    ids=["unreadable", "not UTF-8"],
)
def test_a_project_config_that_cannot_be_read_is_named_and_the_run_goes_on(
    sandbox: Sandbox, model: FakeModelServer, spoil, words: str
) -> None:
    config = sandbox.workspace / ".local_coding_harness.json"
    spoil(config)
    model.add(Reply(content="done"))
    result = harness(sandbox, "-p", "hi")
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 0, result.stderr
    assert f"config: {config}: {words}" in result.stderr
    doctor = harness(sandbox, "doctor")
    assert "Traceback" not in doctor.stderr, doctor.stderr
    assert doctor.returncode == 1
    assert f"PROBLEM  {config}:" in doctor.stdout


def test_a_config_nested_too_deep_is_named(sandbox: Sandbox) -> None:
    (sandbox.home / ".coding_harness.json").write_text("[" * 100_000)
    doctor = harness(sandbox, "doctor")
    assert "Traceback" not in doctor.stderr, doctor.stderr
    assert "nested too deeply" in doctor.stdout
    result = harness(sandbox, "-p", "hi")
    assert "RecursionError" not in result.stderr, result.stderr
    assert "nested too deeply" in result.stderr  # the daemon started and named the file
