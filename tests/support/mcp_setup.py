"""Helpers for the tests that run real MCP servers through the daemon (no tests of their own).

`stdio_server` and `http_server` write config entries for the servers from
PyPI in the venv (`mcp-server-time`, `-fetch`, `-git`) and for the SDK's HTTP
server of tests/support/mcp_http_server.py; `use_servers` puts them in the
sandbox's global config, beside the fake model's profile. `tool_results` reads
what the model was sent back, `stream_events` the events of a
`--output-format stream-json` run, `mcp_list` asks the daemon, and
`server_processes` finds the MCP servers among a daemon's descendants by their
command line. `daemon_with_servers` runs a daemon for one test and leaves none of
its servers behind, even when the daemon would.
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil

from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer
from tests.support.processes import client, start_daemon

BIN = Path(sys.executable).parent
TIME = str(BIN / "mcp-server-time")
FETCH = str(BIN / "mcp-server-fetch")
GIT = str(BIN / "mcp-server-git")


def stdio_server(command: str, *args: str, **extra: Any) -> dict[str, Any]:
    return {"command": command, "args": list(args), **extra}


def http_server(url: str, **extra: Any) -> dict[str, Any]:
    return {"url": url, **extra}


def use_servers(sandbox: Sandbox, servers: dict[str, dict[str, Any]]) -> None:
    """Set `mcp_servers` in the sandbox's global config (the model's profile stays)."""
    path = sandbox.home / ".coding_harness.json"
    config = json.loads(path.read_text()) if path.exists() else {}
    config["mcp_servers"] = servers
    path.write_text(json.dumps(config))


def tool_results(model: FakeModelServer, request: int = -1) -> list[str]:
    """The tool messages of one request the model was sent (by default the last)."""
    messages = model.requests[request]["messages"]
    return [str(m["content"]) for m in messages if m["role"] == "tool"]


def offered_tools(model: FakeModelServer, request: int = 0) -> list[str]:
    """The names of the tools one request offered the model."""
    return [tool["function"]["name"] for tool in model.requests[request].get("tools") or []]


def stream_events(stdout: str) -> list[dict[str, Any]]:
    """The events of a stream-json run (its last line is the summary object, left out)."""
    lines = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    return [line for line in lines if "kind" in line]


def of_kind(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [event["data"] for event in events if event["kind"] == kind]


def mcp_list(sandbox: Sandbox, cwd: Path | None = None) -> dict[str, dict[str, Any]]:
    """`mcp.list` of the sandbox's daemon, by server name."""
    params = {"cwd": str(cwd)} if cwd is not None else {}
    with client(sandbox.socket) as conn:
        answer = conn.request("mcp.list", params, timeout=30)
    return {server["name"]: server for server in answer["servers"]}


def server_processes(daemon_pid: int, *names: str) -> list[psutil.Process]:
    """The live descendants of the daemon whose command line names one of `names`."""
    found = []
    for child in psutil.Process(daemon_pid).children(recursive=True):
        try:
            line = " ".join(child.cmdline())
            if child.status() != psutil.STATUS_ZOMBIE and any(name in line for name in names):
                found.append(child)
        except psutil.NoSuchProcess:
            continue
    return found


def processes_named(*names: str) -> list[psutil.Process]:
    """Every live process on the machine whose command line names one of `names`."""
    found = []
    for process in psutil.process_iter():
        try:
            line = " ".join(process.cmdline())
            if process.status() != psutil.STATUS_ZOMBIE and any(name in line for name in names):
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


@contextmanager
def daemon_with_servers(sandbox: Sandbox) -> Iterator[subprocess.Popen[bytes]]:
    """A daemon on the sandbox's socket; afterwards it is stopped, and any MCP server it
    started that outlived it (which it should not) is killed, so a test leaves nothing."""
    process = start_daemon(sandbox.socket, sandbox.env)
    started: set[psutil.Process] = set()
    try:
        yield process
    finally:
        with contextlib.suppress(psutil.NoSuchProcess):
            started.update(psutil.Process(process.pid).children(recursive=True))
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
        for child in started:
            with contextlib.suppress(psutil.NoSuchProcess):
                child.kill()
