"""The daemon's side of MCP, end to end: tools offered, called, listed, idled, started early.

Each test runs the real daemon on a temporary socket with the real
`mcp-server-time` from PyPI (installed by `make test`) and the fake model.
The servers of the issue's other cases (fetch, git, HTTP, approvals, a killed
server, untrusted `.mcp.json`, process counts) are in test_mcp_servers.py.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from coding_harness.protocol import methods as m
from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import (
    client,
    run_harness,
    start_daemon,
    stop_daemon,
    wait_for_event,
)

pytestmark = pytest.mark.integration

TIME_SERVER = Path(sys.executable).parent / "mcp-server-time"


def _configure(sandbox: Sandbox, model: FakeModelServer, **servers: dict[str, Any]) -> None:
    config = json.loads((sandbox.home / ".coding_harness.json").read_text())
    config["mcp_servers"] = servers
    (sandbox.home / ".coding_harness.json").write_text(json.dumps(config))


def _time(**extra: Any) -> dict[str, Any]:
    return {"command": str(TIME_SERVER), "approve": "never", **extra}


def test_the_model_sees_and_calls_a_servers_tools(sandbox: Sandbox, model: FakeModelServer) -> None:
    _configure(sandbox, model, time=_time())
    model.add(
        Reply(tool_calls=[tool_call("mcp__time__get_current_time", timezone="UTC")]),
        Reply(content="it is late"),
    )
    done = run_harness(["-p", "what time is it?"], env=sandbox.env, cwd=sandbox.workspace)
    assert done.returncode == 0, done.stderr
    offered = [tool["function"]["name"] for tool in model.requests[0]["tools"]]
    assert "mcp__time__get_current_time" in offered
    assert "mcp__time__convert_time" in offered
    result = next(m["content"] for m in model.requests[1]["messages"] if m["role"] == "tool")
    assert '"timezone": "UTC"' in result
    assert "datetime" in result


def test_mcp_list_shows_a_configured_server_stopped_then_ready(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any
) -> None:
    _configure(sandbox, model, time=_time())
    with client(sandbox.socket) as conn:
        before = conn.request(m.MCP_LIST, {"cwd": str(sandbox.workspace)})["servers"]
        assert [(s["name"], s["state"], s["pid"]) for s in before] == [("time", "stopped", None)]
        started = conn.request(m.MCP_RESTART, {"name": "time", "cwd": str(sandbox.workspace)})
        server = started["server"]
        assert server["state"] == "ready"
        assert server["tools"] == ["get_current_time", "convert_time"]
        assert psutil.Process(server["pid"]).is_running()
        assert server["command"] == str(TIME_SERVER)


def test_an_idle_server_is_stopped(sandbox: Sandbox, model: FakeModelServer, daemon: Any) -> None:
    _configure(sandbox, model, time=_time(idle_seconds=1))
    with client(sandbox.socket) as conn:
        pid = conn.request(m.MCP_RESTART, {"name": "time", "cwd": str(sandbox.workspace)})[
            "server"
        ]["pid"]
        deadline = time.monotonic() + 15
        while psutil.pid_exists(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not psutil.pid_exists(pid)
        while time.monotonic() < deadline:  # the link says so once its shutdown is over
            listed = conn.request(m.MCP_LIST, {})["servers"]
            if listed[0]["state"] == "stopped":
                break
            time.sleep(0.1)
        assert [(s["name"], s["state"], s["pid"]) for s in listed] == [("time", "stopped", None)]


def test_an_eager_server_starts_with_the_daemon_and_stops_with_it(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    _configure(sandbox, model, time=_time(start="eager"))
    process = start_daemon(sandbox.socket, sandbox.env)
    try:
        with client(sandbox.socket) as conn:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                servers = conn.request(m.MCP_LIST, {})["servers"]
                if servers and servers[0]["state"] == "ready":
                    break
                time.sleep(0.2)
            assert servers[0]["state"] == "ready"
            pid = servers[0]["pid"]
    finally:
        stop_daemon(sandbox.socket)
        process.wait(timeout=20)
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_context_counts_the_tool_schemas_of_a_running_server(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any
) -> None:
    _configure(sandbox, model, time=_time())
    model.add(Reply(content="hello"))
    with client(sandbox.socket) as conn:
        session = conn.request(m.SESSION_CREATE, {"cwd": str(sandbox.workspace)})["session"]
        before = conn.request(m.SESSION_CONTEXT, {"session": session})
        assert before["mcp_servers"] == []  # not started: nothing offered yet
        conn.request(m.SESSION_ATTACH, {"session": session})
        conn.request(m.SESSION_SUBMIT, {"session": session, "text": "hi"})
        wait_for_event(conn, "turn.finished", timeout=30)
        after = conn.request(m.SESSION_CONTEXT, {"session": session})
    [server] = after["mcp_servers"]
    assert (server["name"], server["tools"]) == ("time", 2)
    assert server["tokens"] > 50
    # (tokens are rounded per part: the sum may be one short)
    assert after["system_tokens"] >= before["system_tokens"] + server["tokens"] - 1
