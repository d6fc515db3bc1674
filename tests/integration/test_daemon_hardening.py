"""The daemon closes itself to the user's other processes, and takes keys from files.

Issue 10 item 5 (the daemon part) and RELIABILITY 37 and 73: a process of the
same user cannot read `/proc/<daemon>/environ` (the daemon is non-dumpable);
keys can reach it through systemd's `$CREDENTIALS_DIRECTORY` rather than its
environment, and no tool command sees them.

Root may read any process's environ (CAP_SYS_PTRACE), so when the tests run as
root the daemon and the reader both run as `nobody` (through setpriv).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import client, daemon_pid, start_daemon, wait_for_socket

SECRET = "environ-secret-51f0c2"
NOBODY = 65534
READ_ENVIRON = "import sys; sys.stdout.buffer.write(open(sys.argv[1], 'rb').read())"


def as_nobody(argv: list[str]) -> list[str]:
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv]


@pytest.fixture
def nobody_folder() -> Iterator[Path]:
    if not sys.platform.startswith("linux"):
        pytest.skip("/proc/<pid>/environ is Linux's")
    if os.getuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: no same-uid reader to test with")
        probe = as_nobody([sys.executable, "-c", "import coding_harness.daemon.app"])
        if subprocess.run(probe, capture_output=True, timeout=60, check=False).returncode:
            pytest.skip("nobody cannot run this Python (a private home?): no reader to test with")
    root = Path(tempfile.mkdtemp(prefix="chh-", dir="/tmp"))
    if os.getuid() == 0:
        os.chown(root, NOBODY, NOBODY)
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def start_daemon_as_user(root: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """The daemon as the test's own user, or as nobody when that user is root."""
    command = [sys.executable, "-m", "coding_harness.daemon", "--socket", str(root / "d.sock")]
    process = subprocess.Popen(
        as_nobody(command) if os.getuid() == 0 else command,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_socket(root / "d.sock")
    except TimeoutError:
        process.kill()
        process.wait(timeout=5)
        raise
    return process


def read_as_user(path: str) -> subprocess.CompletedProcess[bytes]:
    command = [sys.executable, "-c", READ_ENVIRON, path]
    return subprocess.run(
        as_nobody(command) if os.getuid() == 0 else command,
        capture_output=True,
        timeout=30,
        check=False,
    )


def test_another_process_of_the_user_cannot_read_the_daemons_environ(
    nobody_folder: Path,
) -> None:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(nobody_folder),
        "XDG_STATE_HOME": str(nobody_folder / "state"),
        "DAEMON_ONLY_NOTE": SECRET,
        **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"},
    }
    # A control: the same reader does see the environ of an ordinary process.
    control = subprocess.Popen(
        as_nobody(["sleep", "30"]) if os.getuid() == 0 else ["sleep", "30"], env=env
    )
    daemon = start_daemon_as_user(nobody_folder, env)
    try:
        seen = read_as_user(f"/proc/{control.pid}/environ")
        assert SECRET.encode() in seen.stdout, seen.stderr
        pid = daemon_pid(nobody_folder / "d.sock")
        attempt = read_as_user(f"/proc/{pid}/environ")
        assert SECRET.encode() not in attempt.stdout
        assert b"PermissionError" in attempt.stderr
    finally:
        control.kill()
        control.wait(timeout=5)
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=10)


# The recipe reads the environ of make's parent: the daemon.
PEEKING_MAKEFILE = (
    "peek:\n"
    "\t@cat /proc/$$(cut -d' ' -f4 /proc/$$PPID/stat)/environ | tr '\\0' '\\n'; echo status=$$?\n"
)


def test_a_recipe_cannot_read_the_daemons_environ(nobody_folder: Path) -> None:
    model = FakeModelServer().start()
    home, workspace = nobody_folder / "home", nobody_folder / "proj"
    for folder in (home, workspace):
        folder.mkdir()
        if os.getuid() == 0:
            os.chown(folder, NOBODY, NOBODY)
    config = {
        "default_provider": "fake",
        "providers": {
            "fake": {"type": "openai", "endpoint": model.endpoint, "model": "fake-model"}
        },
        # The daemon's own guard (non-dumpable), not the sandbox, which hides it anyway
        # (tests/integration/test_sandbox.py).
        "agent": {"sandbox": "off"},
    }
    (home / ".coding_harness.json").write_text(json.dumps(config))
    (workspace / "Makefile").write_text(PEEKING_MAKEFILE)
    model.add(Reply(tool_calls=[tool_call("run_shell", command="make peek")]), Reply(content="ok"))
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "XDG_STATE_HOME": str(nobody_folder / "state"),
        "CODING_HARNESS_SOCKET": str(nobody_folder / "d.sock"),
        "DAEMON_ONLY_NOTE": SECRET,
        **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"},
    }
    daemon = start_daemon_as_user(nobody_folder, env)
    try:
        command = [sys.executable, "-m", "coding_harness.client", "-y", "-p", "peek"]
        done = subprocess.run(
            as_nobody(command) if os.getuid() == 0 else command,
            env={k: v for k, v in env.items() if k != "DAEMON_ONLY_NOTE"},
            cwd=workspace,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=10)
        model.stop()
    assert done.returncode == 0, done.stderr
    tool_output = next(m["content"] for m in model.requests[1]["messages"] if m["role"] == "tool")
    assert "status=" in tool_output  # the recipe ran
    assert SECRET not in tool_output
    assert "Permission denied" in tool_output


def test_a_key_from_the_credentials_folder_is_used_but_never_shown_to_tools(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    sandbox.write_config(model.endpoint, api_key_env="MODEL_PASS")
    credentials = sandbox.root / "credentials"
    credentials.mkdir(mode=0o700)
    (credentials / "MODEL_PASS").write_text("cred-pass-8c41d7\n")
    (credentials / "MODEL_PASS").chmod(0o600)
    (sandbox.workspace / "Makefile").write_text("dump:\n\t@env\n")
    model.add(Reply(tool_calls=[tool_call("run_shell", command="make dump")]), Reply(content="ok"))
    env = {**sandbox.env, "CREDENTIALS_DIRECTORY": str(credentials)}
    env.pop("MODEL_PASS", None)
    daemon = start_daemon(sandbox.socket, env)
    try:
        with client(sandbox.socket) as conn:
            [profile] = conn.request("provider.list")["providers"]
            session = conn.request("session.create", {"cwd": str(sandbox.workspace)})["session"]
            conn.request("session.attach", {"session": session})
            options = {"yes": True}  # a make target other than check would ask first
            conn.request("session.submit", {"session": session, "text": "env", "options": options})
            while not len(model.requests) >= 2:
                note = conn.next_notification(timeout=20)
                assert note is not None, "the turn did not go on"
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=10)
    assert profile["key_present"] is True
    tool_output = next(m["content"] for m in model.requests[1]["messages"] if m["role"] == "tool")
    assert "HOME=" in tool_output
    assert "cred-pass-8c41d7" not in tool_output
    assert "CREDENTIALS_DIRECTORY" not in tool_output
