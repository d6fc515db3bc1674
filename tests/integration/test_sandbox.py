"""The sandbox under run_shell and make check, against a hostile Makefile recipe.

The recipe runs a probe that tries, one by one, what a recipe the model wrote
could try: write outside the workspace, read the home folder's secrets
(`~/.ssh/id_rsa`, shell history, `~/.bashrc`, cargo's and Hugging Face's
tokens, `~/.pgpass`, `~/.vault-token`), read another process's environment,
write git's hooks and config, connect to a port on loopback, signal the
daemon; and, with the home folder as the workspace, read the key, append to
`authorized_keys` and rewrite the trust store. It also reads what it may: a
toolchain folder of the built-in list, a folder `agent.sandbox_home` adds, and
writes in the workspace. With the sandbox every escape fails and every file
outside is untouched; with `"sandbox": "off"` each one succeeds, which shows
the probe can tell. These tests need bubblewrap (`.ci/run` installs it where
it can); elsewhere they skip, saying why.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
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
from tests.support.processes import run_harness, start_daemon, stop_daemon

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not probe().usable, reason=f"no sandbox here: {probe().reason}"),
]

# argv: `name:action:path` each; a read counts as "ok" only when it finds SECRET.
PROBE = """
import os, socket, sys
results = {}
def attempt(name, action):
    try:
        done = action()
        results[name] = "blocked: empty" if done is False else "ok"
    except Exception as exc:
        results[name] = "blocked: " + type(exc).__name__
def read(path):
    with open(os.path.expanduser(path), errors="replace") as handle:
        return "SECRET" in handle.read()
def write(path, mode):
    with open(os.path.expanduser(path), mode) as handle:
        handle.write("written by the recipe\\n")
def connect(port):
    socket.create_connection(("127.0.0.1", int(port)), timeout=3).close()
actions = {
    "read": read,
    "write": lambda path: write(path, "w"),
    "append": lambda path: write(path, "a"),
    "connect": connect,
    "signal": lambda pid: os.kill(int(pid), 0),
}
for item in sys.argv[1:]:
    name, action, path = item.split(":", 2)
    attempt(name, lambda: actions[action](path))
print("PROBE " + " ".join(f"{k}={v.split(':')[0]}" for k, v in sorted(results.items())))
"""

# The home folder's secrets, each holding SECRET.
HOME_SECRETS = {
    "read_key": ".ssh/id_rsa",
    "read_history": ".bash_history",
    "read_bashrc": ".bashrc",
    "read_cargo_token": ".cargo/credentials.toml",
    "read_pgpass": ".pgpass",
    "read_hf_token": ".cache/huggingface/token",
    "read_vault_token": ".vault-token",
}
# Readable with the sandbox too: a built-in toolchain folder, one the user added.
SHOWN = {"read_toolchain": ".cargo/bin/tool", "read_added": "tools/extra/notes"}


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


@pytest.fixture
def neighbour() -> Iterator[int]:
    """Another process of the user's, with a secret in its environment."""
    process = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)"],
        env={**os.environ, "NEIGHBOUR_TOKEN": "SECRET"},
    )
    yield process.pid
    process.kill()
    process.wait(timeout=10)


def _furnish_home(home: Path) -> None:
    for path in [*HOME_SECRETS.values(), *SHOWN.values()]:
        (home / path).parent.mkdir(parents=True, exist_ok=True)
        (home / path).write_text("SECRET\n")


def _git_folder(workspace: Path) -> None:
    (workspace / ".git" / "hooks").mkdir(parents=True, exist_ok=True)
    (workspace / ".git" / "config").write_text("[core]\n\tbare = false\n")


def _run_probe(
    sandbox: Sandbox, model: FakeModelServer, mode: str, workspace: Path, attempts: list[str]
) -> tuple[dict[str, str], str]:
    """The probe's results as the model saw them, and what the client printed."""
    config = json.loads((sandbox.home / ".coding_harness.json").read_text())
    config["agent"] = {"sandbox": mode, "sandbox_home": ["~/tools/extra"]}
    (sandbox.home / ".coding_harness.json").write_text(json.dumps(config))
    _furnish_home(sandbox.home)
    _git_folder(workspace)
    (workspace / "probe.py").write_text(PROBE)
    quoted = " ".join(f"'{attempt}'" for attempt in attempts)
    (workspace / "Makefile").write_text(f"check:\n\t{sys.executable} probe.py {quoted}\n")
    model.add(Reply(tool_calls=[tool_call("run_shell", command="make check")]), Reply(content="ok"))
    done = run_harness(["-y", "-p", "run the checks"], env=sandbox.env, cwd=workspace)
    assert done.returncode == 0, done.stderr
    result = next(m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool")
    line = next(part for part in result.splitlines() if part.startswith("PROBE "))
    found = dict(item.split("=", 1) for item in line.removeprefix("PROBE ").split())
    return found, done.stdout + done.stderr


def _project_attempts(outside: Path, port: int, daemon: int, neighbour: int) -> list[str]:
    return [
        f"write_outside:write:{outside}",
        f"connect:connect:{port}",
        f"signal_daemon:signal:{daemon}",
        f"read_environ:read:/proc/{neighbour}/environ",
        "write_hook:write:.git/hooks/pre-commit",
        "write_git_config:append:.git/config",
        "write_workspace:write:made_here.txt",
        *(f"{name}:read:~/{path}" for name, path in {**HOME_SECRETS, **SHOWN}.items()),
    ]


def _probe_project(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, listener: Any, neighbour: int, mode: str
) -> tuple[dict[str, str], Path]:
    outside = Path("/var/tmp") / f"harness-sandbox-{uuid.uuid4().hex}"
    attempts = _project_attempts(outside, listener[0], daemon.pid, neighbour)
    found, _ = _run_probe(sandbox, model, mode, sandbox.workspace, attempts)
    return found, outside


def test_a_hostile_recipe_is_stopped_at_every_escape(
    sandbox: Sandbox,
    model: FakeModelServer,
    daemon: Any,
    listener: tuple[int, list[str]],
    neighbour: int,
) -> None:
    found, outside = _probe_project(sandbox, model, daemon, listener, neighbour, "auto")
    allowed = {"write_workspace", *SHOWN}
    assert {name for name, result in found.items() if result == "ok"} == allowed, found
    assert len(found) == len(_project_attempts(outside, 0, 0, 0))
    assert not outside.exists()
    assert listener[1] == []
    assert (sandbox.workspace / "made_here.txt").read_text() == "written by the recipe\n"
    assert not (sandbox.workspace / ".git/hooks/pre-commit").exists()
    assert "recipe" not in (sandbox.workspace / ".git/config").read_text()


def test_the_same_recipe_escapes_with_the_sandbox_off(
    sandbox: Sandbox,
    model: FakeModelServer,
    daemon: Any,
    listener: tuple[int, list[str]],
    neighbour: int,
) -> None:
    found, outside = _probe_project(sandbox, model, daemon, listener, neighbour, "off")
    try:
        assert set(found.values()) == {"ok"}, found
        assert outside.read_text() == "written by the recipe\n"
        assert listener[1] == ["connected"]
    finally:
        outside.unlink(missing_ok=True)


HOME_ATTEMPTS = [
    "read_key:read:.ssh/id_rsa",
    "append_authorized_keys:append:.ssh/authorized_keys",
    "read_bashrc:read:.bashrc",
    "write_hook:write:.git/hooks/pre-commit",
    "read_toolchain:read:.cargo/bin/tool",
]


@pytest.fixture
def home_daemon(sandbox: Sandbox, model: FakeModelServer) -> Iterator[Path]:
    """A daemon whose state folder (and so the trust store) is in the home folder,
    as it is by default; the path of the trust store."""
    sandbox.env["XDG_STATE_HOME"] = str(sandbox.home / ".local" / "state")
    store = sandbox.home / ".local/state/coding-harness/trusted_projects.json"
    store.parent.mkdir(parents=True)
    store.write_text("{}\n")
    (sandbox.home / ".ssh").mkdir()
    (sandbox.home / ".ssh/authorized_keys").write_text("ssh-ed25519 AAAA user\n")
    process = start_daemon(sandbox.socket, sandbox.env)
    try:
        yield store
    finally:
        stop_daemon(sandbox.socket)
        process.wait(timeout=10)


def test_a_recipe_in_the_home_folder_cannot_reach_its_secrets(
    sandbox: Sandbox, model: FakeModelServer, home_daemon: Path
) -> None:
    attempts = [*HOME_ATTEMPTS, f"write_trust_store:write:{home_daemon}"]
    found, printed = _run_probe(sandbox, model, "auto", sandbox.home, attempts)
    assert {name for name, result in found.items() if result == "ok"} == {"read_toolchain"}
    assert len(found) == len(attempts), found
    assert "the workspace is your home folder" in printed
    assert (sandbox.home / ".ssh/authorized_keys").read_text() == "ssh-ed25519 AAAA user\n"
    assert home_daemon.read_text() == "{}\n"
    assert not (sandbox.home / ".git/hooks/pre-commit").exists()


def test_the_home_folder_recipe_escapes_with_the_sandbox_off(
    sandbox: Sandbox, model: FakeModelServer, home_daemon: Path
) -> None:
    attempts = [*HOME_ATTEMPTS, f"write_trust_store:write:{home_daemon}"]
    found, printed = _run_probe(sandbox, model, "off", sandbox.home, attempts)
    assert set(found.values()) == {"ok"}, found
    assert "the workspace is your home folder" in printed
    assert "recipe" in home_daemon.read_text()
