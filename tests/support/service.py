"""Playing the service manager in tests: socket activation, sd_notify, fake tools.

`activated_daemon` starts harnessd the way systemd does: it binds and listens
on the socket itself, passes it as fd 3 with LISTEN_FDS=1 and LISTEN_PID set
to the daemon's own pid (a tiny `python -c` wrapper sets it, then execs the
daemon), and points NOTIFY_SOCKET at a `NotifyRecorder`. The daemon and the
listening socket are always cleaned up, failure or not.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.support.processes import wait_for_socket

# Runs as the child: move the listening socket to fd 3, announce it, become harnessd.
ACTIVATE = """\
import os, sys
fd = int(sys.argv[1])
if fd != 3:
    os.dup2(fd, 3)
    os.close(fd)
os.set_inheritable(3, True)
os.environ["LISTEN_FDS"] = "1"
os.environ["LISTEN_PID"] = str(os.getpid())
os.execv(sys.executable, [sys.executable, "-m", "coding_harness.daemon", *sys.argv[2:]])
"""

# Runs harnessd as if it were an older release.
OLD_VERSION = """\
import sys
import coding_harness.protocol.version as version
version.__version__ = sys.argv[1]
from coding_harness.daemon.cli import main
sys.exit(main(sys.argv[2:]))
"""


class NotifyRecorder:
    """A datagram socket standing in for systemd's notify socket."""

    def __init__(self, path: Path | None = None) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        if path is None:
            name = f"chi-notify-{secrets.token_hex(6)}"
            self.sock.bind(b"\0" + name.encode())
            self.address = f"@{name}"
        else:
            self.sock.bind(os.fspath(path))
            self.address = os.fspath(path)
        self.messages: list[str] = []

    def wait_for(self, line: str, timeout: float = 10.0) -> str:
        """The first datagram with `line` among its lines; TimeoutError if none arrives."""
        deadline = time.monotonic() + timeout
        for message in self.messages:
            if line in message.splitlines():
                return message
        while time.monotonic() < deadline:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                message = self.sock.recv(4096).decode()
            except TimeoutError:
                break
            self.messages.append(message)
            if line in message.splitlines():
                return message
        raise TimeoutError(f"no {line} within {timeout} s; got {self.messages}")

    def close(self) -> None:
        self.sock.close()


def listening_socket(path: Path) -> socket.socket:
    """Bind and listen as systemd would (folder 0700, socket 0600)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(os.fspath(path))
    path.chmod(0o600)
    sock.listen(16)
    return sock


@dataclass
class Activated:
    process: subprocess.Popen[bytes]
    listener: socket.socket
    notify: NotifyRecorder


def stop_process(process: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


@contextlib.contextmanager
def activated_daemon(
    socket_path: Path,
    env: dict[str, str],
    *extra: str,
    notify_path: Path | None = None,
) -> Iterator[Activated]:
    listener = listening_socket(socket_path)
    notify = NotifyRecorder(notify_path)
    err_path = socket_path.parent.parent / "harnessd-activated.stderr"
    process: subprocess.Popen[bytes] | None = None
    try:
        with err_path.open("wb") as err:
            process = subprocess.Popen(
                [sys.executable, "-c", ACTIVATE, str(listener.fileno()), *extra],
                env={**env, "NOTIFY_SOCKET": notify.address},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                pass_fds=(listener.fileno(),),
            )
        yield Activated(process=process, listener=listener, notify=notify)
    finally:
        if process is not None:
            stop_process(process)
        listener.close()
        notify.close()


@contextlib.contextmanager
def old_daemon(socket_path: Path, env: dict[str, str], version: str) -> Iterator[int]:
    """A real harnessd that reports `version` in `initialize`; yields its pid."""
    process = subprocess.Popen(
        [sys.executable, "-c", OLD_VERSION, version, "--socket", str(socket_path)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_socket(socket_path)
        yield process.pid
    finally:
        stop_process(process)


def fake_tool(bin_dir: Path, name: str, log: Path, exit_code: int = 0, stdout: str = "") -> Path:
    """A script called `name` that appends its arguments (one line per call) to `log`."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / name
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, sys\n"
        f"with open({str(log)!r}, 'a') as f:\n"
        "    f.write(json.dumps(sys.argv[1:]) + '\\n')\n"
        f"sys.stdout.write({stdout!r})\n"
        f"sys.exit({exit_code})\n"
    )
    script.chmod(0o755)
    return script
