"""First-run discovery uses only the user's own model servers (issue 25, item 13).

A server on a probed loopback port run by another local user would get the
prompts and the files the model reads: it is skipped, even when it is the
preferred port, a key variable is used instead, and `harness doctor` names it.
Real daemon, real sockets: a listing server in this process (ours) and one run
as `nobody` (needs root to start; skipped otherwise).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import subprocess
from collections.abc import Iterator

import pytest

from coding_harness.daemon.providers.discovery import KEY_VARIABLES
from coding_harness.daemon.providers.socket_owner import listener_owner
from coding_harness.protocol import methods
from tests.integration.conftest import Sandbox
from tests.support.commands import run_command
from tests.support.model_listing import (
    PROBE_PORTS,
    ListingModelServer,
    probe_ports,
    without_keys,
)
from tests.support.processes import client, start_daemon

pytestmark = pytest.mark.integration

# A model server as another user would run it: the standard library only.
FOREIGN_SERVER = """
import http.server, json, sys
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"data": [{"id": "theirs"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


@pytest.fixture
def foreign_port() -> Iterator[int]:
    """The port of a model server run by `nobody`."""
    python = shutil.which("python3", path="/usr/bin:/bin")
    if os.getuid() != 0 or python is None:
        pytest.skip("starting a server as another user needs root and a system python3")
    nobody = pwd.getpwnam("nobody")

    def become_nobody() -> None:
        os.setgid(nobody.pw_gid)
        os.setuid(nobody.pw_uid)

    process = subprocess.Popen(
        [python, "-I", "-c", FOREIGN_SERVER],
        stdout=subprocess.PIPE,
        cwd="/",
        env={"PATH": "/usr/bin:/bin"},
        preexec_fn=become_nobody,
    )
    try:
        assert process.stdout is not None
        yield int(process.stdout.readline())
    finally:
        process.kill()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


@pytest.fixture
def ours() -> Iterator[ListingModelServer]:
    server = ListingModelServer(["tiny-coder"]).start()
    yield server
    server.stop()


@pytest.fixture
def clean_env(sandbox: Sandbox) -> dict[str, str]:
    sandbox.env = without_keys(sandbox.env, KEY_VARIABLES)
    return sandbox.env


@contextlib.contextmanager
def daemon_probing(sandbox: Sandbox, ports: str) -> Iterator[subprocess.Popen[bytes]]:
    process = start_daemon(sandbox.socket, {**sandbox.env, PROBE_PORTS: ports})
    try:
        yield process
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)


def test_a_server_of_this_process_is_ours(ours: ListingModelServer) -> None:
    assert listener_owner(ours.port).ours


def test_another_users_server_is_not_ours(foreign_port: int) -> None:
    owner = listener_owner(foreign_port)
    assert not owner.ours and owner.uid == pwd.getpwnam("nobody").pw_uid
    assert "nobody" in owner.why


def test_discovery_skips_another_users_server_for_the_users_own(
    sandbox: Sandbox, clean_env: dict[str, str], foreign_port: int, ours: ListingModelServer
) -> None:
    ports = probe_ports(ollama=foreign_port, vllm=ours.port)  # theirs is preferred
    with daemon_probing(sandbox, ports), client(sandbox.socket) as conn:
        found = conn.request(methods.PROVIDER_DISCOVER, {})
    assert [s["name"] for s in found["servers"]] == ["vllm"] and found["chosen"] == "vllm"
    [skipped] = found["skipped"]
    assert (skipped["name"], skipped["port"]) == ("ollama", foreign_port)
    assert "nobody" in skipped["why"]


def test_the_users_key_wins_over_another_users_server_and_doctor_says_why(
    sandbox: Sandbox, clean_env: dict[str, str], foreign_port: int
) -> None:
    env = {**clean_env, "OPENAI_API_KEY": "sk-test-not-sent"}
    with daemon_probing(sandbox, probe_ports(ollama=foreign_port)):
        with client(sandbox.socket) as conn:
            found = conn.request(methods.PROVIDER_DISCOVER, {"env": {"OPENAI_API_KEY": "x"}})
        doctor = run_command("harness", ["doctor"], env=env, cwd=sandbox.workspace)
    assert found["servers"] == [] and found["chosen"] == "openai"
    assert f"skipped ollama at localhost:{foreign_port}: it is run by nobody" in doctor.stdout
    assert "sessions use openai" in doctor.stdout
    assert "theirs" not in doctor.stdout
