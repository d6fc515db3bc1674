"""Several machines on one hub, for the team hub's integration tests.

A `Machine` is what a computer of the team is to the harness: its own HOME (with
a global file naming the hub and a fake model), state folder, socket and
workspace, and its own daemon. `Machines` makes them under one temporary folder
and stops every process of each afterwards, failure or not. The runner of each
is named after the machine (`hub.runner.name`), its person `NAME-person`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coding_harness.protocol.client import Connection
from tests.support import netguard
from tests.support.processes import client, start_daemon, stop_everything_of


@dataclass
class Machine:
    name: str
    root: Path
    home: Path
    workspace: Path
    socket: Path
    env: dict[str, str]
    daemon: subprocess.Popen[bytes] | None = None
    config: dict[str, Any] = field(default_factory=dict)

    @property
    def person(self) -> str:
        return f"{self.name}-person"

    def configure(self, endpoint: str, hub_url: str, **hub: Any) -> None:
        runner = {"name": self.name, **hub.pop("runner", {})}
        self.config = {
            "default_provider": "fake",
            "providers": {"fake": {"type": "openai", "endpoint": endpoint, "model": "fake-model"}},
            "agent": {"sandbox": "off"},
            "hub": {
                "url": hub_url,
                "name": "team-test",
                "person": self.person,
                "runner": runner,
                **hub,
            },
        }
        (self.home / ".coding_harness.json").write_text(json.dumps(self.config))

    def start(self) -> subprocess.Popen[bytes]:
        self.daemon = start_daemon(self.socket, self.env)
        return self.daemon

    def client(self, name: str = "test", approvals: bool = True) -> Connection:
        return client(self.socket, name=name, approvals=approvals)

    def stop(self) -> None:
        stop_everything_of(self.socket)
        if self.daemon is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.daemon.wait(timeout=10)


class Machines:
    def __init__(self) -> None:
        # A short folder under /tmp: socket paths must fit in 107 bytes.
        self.root = Path(tempfile.mkdtemp(prefix="chh-", dir="/tmp"))
        self.all: list[Machine] = []

    def make(self, name: str) -> Machine:
        root = self.root / name
        home, workspace = root / "home", root / "proj"
        home.mkdir(parents=True)
        workspace.mkdir()
        socket_path = root / "run" / "harnessd.sock"
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("CODING_", "XDG_", "NO_COLOR")) and not k.endswith("_API_KEY")
        }
        env.update(
            HOME=str(home),
            XDG_STATE_HOME=str(root / "state"),
            CODING_HARNESS_SOCKET=str(socket_path),
            CODING_HARNESS_PROBE_PORTS="none",
            PATH=f"{Path(sys.executable).parent}:{env.get('PATH', '/usr/bin:/bin')}",
            PYTHONDONTWRITEBYTECODE="1",
        )
        machine = Machine(
            name=name,
            root=root,
            home=home,
            workspace=workspace,
            socket=socket_path,
            env=netguard.guarded_env(env),
        )
        self.all.append(machine)
        return machine

    def close(self) -> None:
        for machine in self.all:
            machine.stop()
        if not os.environ.get("KEEP_SANDBOX"):
            shutil.rmtree(self.root, ignore_errors=True)


@contextmanager
def machines() -> Iterator[Machines]:
    made = Machines()
    try:
        yield made
    finally:
        made.close()
