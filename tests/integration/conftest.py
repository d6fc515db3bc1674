"""Fixtures for tests that run the real daemon, the real `harness` command and
the fake model server, each isolated in a temporary HOME and socket.

`KEEP_SANDBOX=1 make test` keeps each test's folder under /tmp (chi-*), with
the daemon's log in state/coding-harness/daemon.log, for a failure post-mortem. A
failed test's report carries the tail of that log and of the daemon's standard error
anyway, so a failure on CI (whose folders are gone) can be read from its output.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from coding_harness.client.args import OneShotOptions
from coding_harness.protocol.client import Connection
from tests.support import netguard
from tests.support.fake_model_server import FakeModelServer
from tests.support.hub_machines import Machines, machines
from tests.support.processes import client, start_daemon, stop_everything_of
from tests.support.repl_run import ReplRun

BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"


@dataclass
class Sandbox:
    root: Path
    home: Path
    workspace: Path
    socket: Path
    env: dict[str, str]

    def write_config(self, endpoint: str, **profile: object) -> None:
        config = {
            "default_provider": "fake",
            "providers": {
                "fake": {"type": "openai", "endpoint": endpoint, "model": "fake-model", **profile}
            },
            # Commands run the same on every machine, with bubblewrap or without; the
            # sandbox's own tests turn it on (test_sandbox.py). Many of these tests
            # watch tool processes from outside (the keeper, peer checks), which the
            # sandbox would hide.
            "agent": {"sandbox": "off"},
        }
        (self.home / ".coding_harness.json").write_text(json.dumps(config))


def _kept_out(name: str) -> bool:
    """The caller's own settings and keys: a test sees only what it sets."""
    return name.startswith(("CODING_", "XDG_", "NO_COLOR")) or name.endswith("_API_KEY")


POST_MORTEM_LINES = 40


def _tail(path: Path, lines: int = POST_MORTEM_LINES) -> str | None:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return None
    return "\n".join(text.splitlines()[-lines:])


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failed test's report shows what its daemon logged (see the module's docstring)."""
    report: pytest.TestReport = yield
    box = getattr(item, "funcargs", {}).get("sandbox")
    if report.failed and isinstance(box, Sandbox):
        logs = {
            "daemon log": box.root / "state" / "coding-harness" / "daemon.log",
            "daemon stderr": box.root / "harnessd-test.stderr",
        }
        for title, path in logs.items():
            tail = _tail(path)
            if tail:
                report.sections.append((f"{title} (last {POST_MORTEM_LINES} lines)", tail))
    return report


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    # A short folder under /tmp: socket paths must fit in 107 bytes.
    root = Path(tempfile.mkdtemp(prefix="chi-", dir="/tmp"))
    home, workspace = root / "home", root / "proj"
    home.mkdir()
    workspace.mkdir()
    socket_path = root / "run" / "harnessd.sock"
    env = {k: v for k, v in os.environ.items() if not _kept_out(k)}
    env.update(
        HOME=str(home),
        XDG_STATE_HOME=str(root / "state"),
        CODING_HARNESS_SOCKET=str(socket_path),
        CODING_HARNESS_PROBE_PORTS="none",  # first-run discovery looks at no real server
        PATH=f"{Path(sys.executable).parent}:{env.get('PATH', '/usr/bin:/bin')}",
        PYTHONDONTWRITEBYTECODE="1",
    )
    env = netguard.guarded_env(env)
    box = Sandbox(root=root, home=home, workspace=workspace, socket=socket_path, env=env)
    try:
        yield box
    finally:
        stop_everything_of(socket_path)
        if not os.environ.get("KEEP_SANDBOX"):
            shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def model(sandbox: Sandbox) -> Iterator[FakeModelServer]:
    server = FakeModelServer().start()
    sandbox.write_config(server.endpoint)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def calc_project(sandbox: Sandbox) -> Path:
    """A workspace with a bug in calc.py and a `make check` that catches it."""
    (sandbox.workspace / "calc.py").write_text(BUGGY)
    (sandbox.workspace / "Makefile").write_text(
        "check:\n"
        f"\t{sys.executable} -c 'import calc; assert calc.add(2, 3) == 5, \"add is wrong\"'\n"
    )
    return sandbox.workspace


@pytest.fixture
def daemon(sandbox: Sandbox) -> Iterator[subprocess.Popen[bytes]]:
    """A daemon on the sandbox's socket; it reads the config at each session and turn."""
    process = start_daemon(sandbox.socket, sandbox.env)
    yield process
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=10)


@pytest.fixture
def conn(
    sandbox: Sandbox, model: FakeModelServer, daemon: subprocess.Popen[bytes]
) -> Iterator[Connection]:
    """A client connection (approvals on) to the sandbox's daemon, closed afterwards."""
    connection = client(sandbox.socket)
    yield connection
    connection.close()


@pytest.fixture
def repl_env(
    sandbox: Sandbox, model: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """A daemon on the sandbox's socket, and this process's environment set to the
    sandbox's, for clients run in-process (the REPL on a thread)."""
    for key, value in sandbox.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    process = start_daemon(sandbox.socket, sandbox.env)
    yield
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=10)


@pytest.fixture
def repl(calc_project: Path, repl_env: None) -> Iterator[Callable[..., ReplRun]]:
    """Starts REPLs on threads in the calc project (`repl(**options)`); closes their pipes."""
    runs: list[ReplRun] = []

    def start(**options: object) -> ReplRun:
        run = ReplRun(OneShotOptions(cwd=str(calc_project), plain=True, **options))
        runs.append(run)
        return run

    yield start
    for run in runs:  # a failed test must not leave a REPL reading its pipe
        run.pipe.close()


@pytest.fixture
def team() -> Iterator[Machines]:
    """Machines of a team, each with its own daemon (tests/support/hub_machines.py)."""
    with machines() as made:
        yield made
