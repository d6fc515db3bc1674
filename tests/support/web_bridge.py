"""A real `harness web` process on a real daemon and the fake model, for a whole module.

`web_stack()` builds a sandbox (its own HOME, state folder and socket), a
workspace with calc.py's bug and a `make check` that catches it, the fake model
server, the daemon, and `harness web --port 0 --no-qr`, whose printed URL gives
the address and token. Everything is stopped at the end, failure or not.
`login(stack)` is an HTTP client holding the cookie a right token earns.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.integration.conftest import BUGGY, Sandbox, _kept_out
from tests.support import netguard
from tests.support.fake_model_server import FakeModelServer
from tests.support.processes import start_daemon, stop_daemon

_READERS: dict[int, threading.Thread] = {}
URL_LINE = re.compile(r"^open: (http://[^/]+/)\?token=(\S+)$")


@dataclass
class WebStack:
    sandbox: Sandbox
    model: FakeModelServer
    web: subprocess.Popen[str]
    base: str  # http://127.0.0.1:PORT/
    token: str
    output: list[str]

    @property
    def host(self) -> str:
        return self.base.split("/")[2]

    @property
    def origin(self) -> str:
        return self.base.rstrip("/")


def _sandbox() -> Sandbox:
    root = Path(tempfile.mkdtemp(prefix="chw-", dir="/tmp"))
    home, workspace = root / "home", root / "proj"
    home.mkdir()
    workspace.mkdir()
    socket_path = root / "run" / "harnessd.sock"
    env = {k: v for k, v in os.environ.items() if not _kept_out(k)}
    env.update(
        HOME=str(home),
        XDG_STATE_HOME=str(root / "state"),
        CODING_HARNESS_SOCKET=str(socket_path),
        CODING_HARNESS_PROBE_PORTS="none",
        PATH=f"{Path(sys.executable).parent}:{env.get('PATH', '/usr/bin:/bin')}",
        PYTHONDONTWRITEBYTECODE="1",
    )
    return Sandbox(root, home, workspace, socket_path, netguard.guarded_env(env))


def start_web(sandbox: Sandbox, *args: str) -> tuple[subprocess.Popen[str], str, str, list[str]]:
    """`harness web --port 0 --no-qr ARGS`, once it printed its URL: the process, the base
    URL, the token and every line it printed (the reader keeps adding to it)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "coding_harness.client", "web", "--port", "0", "--no-qr", *args],
        env=sandbox.env,
        cwd=sandbox.workspace,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    lines: list[str] = []
    for line in process.stdout:
        lines.append(line.rstrip("\n"))
        found = URL_LINE.match(lines[-1])
        if found:
            reader = threading.Thread(target=_keep_reading, args=(process, lines), daemon=True)
            reader.start()
            _READERS[process.pid] = reader
            return process, found.group(1), found.group(2), lines
    process.wait(timeout=10)
    process.stdout.close()
    raise AssertionError("harness web printed no URL:\n" + "\n".join(lines))


def _keep_reading(process: subprocess.Popen[str], lines: list[str]) -> None:
    assert process.stdout is not None
    for line in process.stdout:
        lines.append(line.rstrip("\n"))


def stop_web(process: subprocess.Popen[str]) -> int:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
    reader = _READERS.pop(process.pid, None)
    if reader is not None:
        reader.join(timeout=5)
    if process.stdout is not None:
        process.stdout.close()
    return process.returncode


@contextlib.contextmanager
def web_stack() -> Iterator[WebStack]:
    sandbox = _sandbox()
    model = FakeModelServer().start()
    daemon: subprocess.Popen[bytes] | None = None
    web: subprocess.Popen[str] | None = None
    try:
        sandbox.write_config(model.endpoint)
        (sandbox.workspace / "calc.py").write_text(BUGGY)
        (sandbox.workspace / "Makefile").write_text(
            "check:\n"
            f"\t{sys.executable} -c 'import calc; assert calc.add(2, 3) == 5, \"add is wrong\"'\n"
        )
        daemon = start_daemon(sandbox.socket, sandbox.env)
        web, base, token, lines = start_web(sandbox)
        yield WebStack(sandbox, model, web, base, token, lines)
    finally:
        if web is not None:
            stop_web(web)
        if daemon is not None:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(timeout=10)
        stop_daemon(sandbox.socket)
        model.stop()
        if not os.environ.get("KEEP_SANDBOX"):
            shutil.rmtree(sandbox.root, ignore_errors=True)


def login(stack: WebStack) -> httpx.Client:
    """A client holding the cookie the token earns (the caller closes it)."""
    client = httpx.Client(base_url=stack.base, timeout=30)
    answer = client.get("/", params={"token": stack.token})
    assert answer.status_code == 200, answer.text
    assert client.cookies.get("harness_web"), answer.headers
    return client
