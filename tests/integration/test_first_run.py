"""First run with no config file (issue 11, item 8): the daemon looks for local model
servers on loopback and for the usual key variables, and a session without a
provider uses what it found; a config file, once written, replaces it all.

Real daemon, real `harness`, real sockets: a fake server listing models on a
probed port, a port that never answers and one that answers garbage. The ports
asked are named with CODING_HARNESS_PROBE_PORTS in the daemon's environment.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from coding_harness.daemon.providers.discovery import KEY_VARIABLES
from coding_harness.protocol import methods
from tests.integration.conftest import Sandbox
from tests.support.commands import run_command
from tests.support.fake_model_server import Reply
from tests.support.model_listing import (
    PROBE_PORTS,
    GarbagePort,
    ListingModelServer,
    SilentPort,
    probe_ports,
    without_keys,
)
from tests.support.processes import client, start_daemon

ANSWER = "Hello from the discovered server."
SECRET = "sk-or-never-shown-4711"


@pytest.fixture
def clean_env(sandbox: Sandbox) -> dict[str, str]:
    """The sandbox's environment without any usual key variable of this machine."""
    sandbox.env = without_keys(sandbox.env, KEY_VARIABLES)
    return sandbox.env


@pytest.fixture
def listing() -> Iterator[ListingModelServer]:
    server = ListingModelServer(["nomic-embed-text", "tiny-coder", "other"]).start()
    yield server
    server.stop()


@pytest.fixture
def hostile() -> Iterator[tuple[SilentPort, GarbagePort, GarbagePort]]:
    silent = SilentPort()
    garbage = GarbagePort(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nnot json!")
    empty = GarbagePort(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        b'Content-Length: 11\r\n\r\n{"data":[]}'
    )
    yield silent, garbage, empty
    for port in (silent, garbage, empty):
        port.close()


def _daemon(sandbox: Sandbox, ports: str, **extra: str) -> subprocess.Popen[bytes]:
    return start_daemon(sandbox.socket, {**sandbox.env, PROBE_PORTS: ports, **extra})


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=10)


def test_oneshot_without_config_uses_the_discovered_server_and_names_it(
    sandbox: Sandbox, clean_env: dict[str, str], listing: ListingModelServer, hostile: tuple
) -> None:
    silent, garbage, empty = hostile
    ports = probe_ports(
        hangs=silent.port, garbage=garbage.port, empty=empty.port, ollama=listing.port
    )
    process = _daemon(sandbox, ports)
    try:
        listing.add(Reply(content=ANSWER))
        result = run_command("harness", ["-p", "say hello"], env=clean_env, cwd=sandbox.workspace)
    finally:
        _stop(process)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ANSWER  # standard output stays the reply
    assert f"ollama · tiny-coder · {sandbox.workspace}" in result.stderr
    assert listing.requests[0]["model"] == "tiny-coder"  # the first model that is not embeddings
    assert not (sandbox.home / ".coding_harness.json").exists()  # nothing written unasked


def test_discovery_skips_silent_and_garbage_ports_within_the_limit(
    sandbox: Sandbox, clean_env: dict[str, str], listing: ListingModelServer, hostile: tuple
) -> None:
    silent, garbage, empty = hostile
    ports = probe_ports(
        hangs=silent.port, garbage=garbage.port, empty=empty.port, lmstudio=listing.port
    )
    process = _daemon(sandbox, ports)
    try:
        with client(sandbox.socket) as conn:
            started = time.monotonic()
            found = conn.request(methods.PROVIDER_DISCOVER, {})
            took = time.monotonic() - started
    finally:
        _stop(process)
    assert [s["name"] for s in found["servers"]] == ["lmstudio"]
    assert found["servers"][0]["models"] == ["nomic-embed-text", "tiny-coder", "other"]
    assert found["chosen"] == "lmstudio" and found["keys"] == []
    assert found["profiles"]["lmstudio"] == {
        "type": "openai",
        "endpoint": f"http://localhost:{listing.port}/v1/chat/completions",
        "model": "tiny-coder",
    }
    assert found["config_file"] == "~/.coding_harness.json" and not found["config_exists"]
    assert [t["port"] for t in found["tried"]] == [
        silent.port,
        garbage.port,
        empty.port,
        listing.port,
    ]
    assert found["seconds"] < 1.0 and took < 2.0, (found["seconds"], took)


def test_key_variables_from_the_client_then_the_daemon_make_profiles(
    sandbox: Sandbox, clean_env: dict[str, str]
) -> None:
    process = _daemon(sandbox, "none", DEEPSEEK_API_KEY="daemon-side")
    try:
        with client(sandbox.socket) as conn:
            hello = conn.server_info
            assert {"OPENROUTER_API_KEY", "OPENAI_API_KEY"} <= set(hello["key_env"])
            found = conn.request(methods.PROVIDER_DISCOVER, {"env": {"OPENROUTER_API_KEY": SECRET}})
            created = conn.request(
                methods.SESSION_CREATE,
                {"cwd": str(sandbox.workspace), "env": {"OPENROUTER_API_KEY": SECRET}},
            )
            listed = conn.request(methods.PROVIDER_LIST, {"session": created["session"]})
    finally:
        _stop(process)
    assert [k["name"] for k in found["keys"]] == ["openrouter", "deepseek"]
    assert found["profiles"]["deepseek"]["api_key_env"] == "DEEPSEEK_API_KEY"
    assert created["provider"] == "openrouter"
    assert created["discovered"]["config"]["api_key_env"] == "OPENROUTER_API_KEY"
    assert "OPENROUTER_API_KEY is set" in created["notice"]
    assert SECRET not in json.dumps(created)  # the key itself is never echoed
    assert {"openrouter", "deepseek", "local"} <= {p["name"] for p in listed["providers"]}


def test_nothing_found_says_what_was_tried_and_which_file_to_write(
    sandbox: Sandbox, clean_env: dict[str, str], hostile: tuple
) -> None:
    silent, _, _ = hostile
    process = _daemon(sandbox, probe_ports(hangs=silent.port))
    try:
        with client(sandbox.socket) as conn:
            created = conn.request(methods.SESSION_CREATE, {"cwd": str(sandbox.workspace)})
    finally:
        _stop(process)
    assert created["provider"] == "local" and created["discovered"] is None
    [line] = [p for p in created["config_problems"] if "nothing found" in p]
    assert f"{silent.port} (hangs)" in line and "OPENAI_API_KEY" in line
    assert "~/.coding_harness.json" in line


def test_a_config_file_replaces_what_was_discovered(
    sandbox: Sandbox, clean_env: dict[str, str], listing: ListingModelServer
) -> None:
    process = _daemon(sandbox, probe_ports(ollama=listing.port))
    try:
        with client(sandbox.socket) as conn:
            first = conn.request(methods.SESSION_CREATE, {"cwd": str(sandbox.workspace)})
            sandbox.write_config(listing.endpoint)
            second = conn.request(methods.SESSION_CREATE, {"cwd": str(sandbox.workspace)})
            listed = conn.request(methods.PROVIDER_LIST, {"session": second["session"]})
    finally:
        _stop(process)
    assert first["provider"] == "ollama" and first["discovered"]["profile"] == "ollama"
    assert second["provider"] == "fake" and "discovered" not in second
    assert [p["name"] for p in listed["providers"]] == ["fake"]
    assert "OPENAI_API_KEY" not in second["key_env"]


def test_doctor_lists_what_the_daemon_found(
    sandbox: Sandbox, clean_env: dict[str, str], listing: ListingModelServer
) -> None:
    process = _daemon(sandbox, probe_ports(vllm=listing.port))
    env = {**clean_env, "GROQ_API_KEY": "g"}
    try:
        result = run_command("harness", ["doctor"], env=env, cwd=sandbox.workspace)
    finally:
        _stop(process)
    assert (
        f"found vllm at localhost:{listing.port} (profile vllm): nomic-embed-text" in result.stdout
    )
    assert "found GROQ_API_KEY set (profile groq" in result.stdout
    assert "sessions use vllm" in result.stdout
    assert "provider local: cannot reach" not in result.stdout  # replaced, so not checked
    assert "\ng\n" not in result.stdout


def test_doctor_says_when_the_daemon_cannot_be_asked(
    sandbox: Sandbox, clean_env: dict[str, str]
) -> None:
    result = run_command("harness", ["doctor"], env=clean_env, cwd=sandbox.workspace)
    assert "cannot ask the daemon which model servers and keys are around" in result.stdout
    assert not Path(sandbox.socket).exists()  # doctor starts no daemon


def test_oneshot_finding_nothing_names_what_was_tried_then_fails_as_before(
    sandbox: Sandbox, clean_env: dict[str, str], hostile: tuple
) -> None:
    silent, garbage, _ = hostile
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", 11434)) == 0:
            pytest.skip("a server listens on 11434, where the built-in profile points")
    process = _daemon(sandbox, probe_ports(hangs=silent.port, garbage=garbage.port))
    try:
        result = run_command("harness", ["-p", "say hello"], env=clean_env, cwd=sandbox.workspace)
    finally:
        _stop(process)
    assert result.returncode == 1 and result.stdout == ""
    [tried] = [line for line in result.stderr.splitlines() if "nothing found" in line]
    assert f"{silent.port} (hangs), {garbage.port} (garbage)" in tried
    assert "~/.coding_harness.json" in tried
    [error] = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert "no model server answers at http://localhost:11434/v1/chat/completions" in error
