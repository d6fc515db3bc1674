"""The sandbox under run_shell and make check, against a hostile Makefile recipe.

The recipe runs a probe that tries, one by one, what a recipe the model wrote
could try: write outside the workspace, read `~/.ssh/id_rsa`, connect to a
port on loopback, signal the daemon, and write in the workspace (which it
may). With the sandbox every escape fails; with `"sandbox": "off"` each one
succeeds, which shows the probe can tell. These tests need bubblewrap
(`.ci/run` installs it where it can); elsewhere they skip, saying why.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from coding_harness.daemon.tools.shell.sandbox import probe
from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import run_harness

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not probe().usable, reason=f"no sandbox here: {probe().reason}"),
]

PROBE = """
import os, socket, sys
results = {}
def attempt(name, action):
    try:
        action()
        results[name] = "ok"
    except Exception as exc:
        results[name] = "blocked: " + type(exc).__name__
outside, port, daemon = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
attempt("write_outside", lambda: open(outside, "w").write("escaped"))
attempt("read_key", lambda: open(os.path.expanduser("~/.ssh/id_rsa")).read())
attempt("connect", lambda: socket.create_connection(("127.0.0.1", port), timeout=3).close())
attempt("signal_daemon", lambda: os.kill(daemon, 0))
attempt("write_workspace", lambda: open("made_here.txt", "w").write("fine"))
print("PROBE " + " ".join(f"{k}={v.split(':')[0]}" for k, v in sorted(results.items())))
"""


@pytest.fixture
def listener() -> Iterator[tuple[int, list[str]]]:
    """A loopback TCP port that records each connection it accepts."""
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[str] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            accepted.append("connected")
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1], accepted
    server.close()


def _run_probe(
    sandbox: Sandbox, model: FakeModelServer, daemon_pid: int, port: int, mode: str
) -> tuple[dict[str, str], Path]:
    config = json.loads((sandbox.home / ".coding_harness.json").read_text())
    config["agent"] = {"sandbox": mode}
    (sandbox.home / ".coding_harness.json").write_text(json.dumps(config))
    (sandbox.home / ".ssh").mkdir(exist_ok=True)
    (sandbox.home / ".ssh" / "id_rsa").write_text("PRIVATE KEY")
    outside = Path("/var/tmp") / f"harness-sandbox-{uuid.uuid4().hex}"
    workspace = sandbox.workspace
    (workspace / "probe.py").write_text(PROBE)
    (workspace / "Makefile").write_text(
        f"check:\n\t{sys.executable} probe.py {outside} {port} {daemon_pid}\n"
    )
    model.add(Reply(tool_calls=[tool_call("run_shell", command="make check")]), Reply(content="ok"))
    done = run_harness(["-y", "-p", "run the checks"], env=sandbox.env, cwd=workspace)
    assert done.returncode == 0, done.stderr
    result = next(m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool")
    line = next(part for part in result.splitlines() if part.startswith("PROBE "))
    found = dict(item.split("=", 1) for item in line.removeprefix("PROBE ").split())
    return found, outside


def test_a_hostile_recipe_is_stopped_at_every_escape(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, listener: tuple[int, list[str]]
) -> None:
    port, accepted = listener
    found, outside = _run_probe(sandbox, model, daemon.pid, port, "auto")
    assert found == {
        "write_outside": "blocked",
        "read_key": "blocked",
        "connect": "blocked",
        "signal_daemon": "blocked",
        "write_workspace": "ok",
    }
    assert not outside.exists()
    assert accepted == []
    assert (sandbox.workspace / "made_here.txt").read_text() == "fine"


def test_the_same_recipe_escapes_with_the_sandbox_off(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, listener: tuple[int, list[str]]
) -> None:
    port, accepted = listener
    found, outside = _run_probe(sandbox, model, daemon.pid, port, "off")
    try:
        assert set(found.values()) == {"ok"}, found
        assert outside.read_text() == "escaped"
        assert accepted == ["connected"]
    finally:
        outside.unlink(missing_ok=True)
