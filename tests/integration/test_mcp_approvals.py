"""Who may run an MCP server's tool, and which servers a project may start.

Approvals: by default (`"approve": "always"`) every call of a server's tool is
put to the user like a command (`approval.requested`, kind `command`, the
summary naming `mcp__SERVER__TOOL` and its arguments); a yes runs it, a no gives
the model a declined result and the server is never called. `"never"` asks
nothing; a list exempts just those tools. Answers come from the one-shot
client's standard input, as a user's pipe would give them.

Trust: a project's `.mcp.json` names a server that would create a marker file;
until `harness trust` it starts nothing and shows nowhere.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator

import pytest

from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.mcp_setup import (
    TIME,
    daemon_with_servers,
    mcp_list,
    of_kind,
    offered_tools,
    stdio_server,
    stream_events,
    tool_results,
    use_servers,
)
from tests.support.oneshot import harness

NOW = tool_call("mcp__time__get_current_time", timezone="UTC")
CONVERT = tool_call(
    "mcp__time__convert_time", source_timezone="UTC", time="12:00", target_timezone="Asia/Tokyo"
)


@pytest.fixture
def harnessd(sandbox: Sandbox, model: FakeModelServer) -> Iterator[subprocess.Popen[bytes]]:
    with daemon_with_servers(sandbox) as process:
        yield process


def run_streamed(sandbox: Sandbox, answers: str, *flags: str) -> list[dict[str, object]]:
    result = harness(sandbox, *flags, "--output-format", "stream-json", "-p", "go", input=answers)
    assert result.returncode == 0, result.stderr
    return stream_events(result.stdout)


def test_by_default_each_call_asks_yes_runs_it_no_declines_it(
    sandbox: Sandbox, model: FakeModelServer, harnessd: subprocess.Popen[bytes]
) -> None:
    use_servers(sandbox, {"time": stdio_server(TIME)})
    model.add(Reply(tool_calls=[NOW]), Reply(content="done"))
    events = run_streamed(sandbox, "y\n")
    [asked] = of_kind(events, "approval.requested")
    assert asked["kind"] == "command"
    assert "mcp__time__get_current_time" in asked["summary"] and "UTC" in asked["summary"]
    assert '"datetime"' in tool_results(model)[0]
    assert mcp_list(sandbox)["time"]["calls"] == 1

    model.add(Reply(tool_calls=[NOW]), Reply(content="fine, no time"))
    events = run_streamed(sandbox, "n\n")
    assert len(of_kind(events, "approval.requested")) == 1
    [declined] = tool_results(model)
    assert "declined" in declined and "datetime" not in declined
    assert mcp_list(sandbox)["time"]["calls"] == 1  # the server was not called


def test_never_asks_nothing_and_a_list_exempts_only_its_tools(
    sandbox: Sandbox, model: FakeModelServer, harnessd: subprocess.Popen[bytes]
) -> None:
    # Any question asked by mistake is answered no, so it shows in the results.
    use_servers(sandbox, {"time": stdio_server(TIME, approve="never")})
    model.add(Reply(tool_calls=[NOW, CONVERT]), Reply(content="done"))
    events = run_streamed(sandbox, "n\n")
    assert of_kind(events, "approval.requested") == []
    now, converted = tool_results(model)
    assert '"datetime"' in now and "Asia/Tokyo" in converted
    assert mcp_list(sandbox)["time"]["calls"] == 2

    use_servers(sandbox, {"time": stdio_server(TIME, approve=["get_current_time"])})
    model.add(Reply(tool_calls=[NOW, CONVERT]), Reply(content="done"))
    events = run_streamed(sandbox, "n\n")
    [asked] = of_kind(events, "approval.requested")
    assert "mcp__time__convert_time" in asked["summary"]
    now, converted = tool_results(model)
    assert '"datetime"' in now
    assert "declined" in converted
    assert mcp_list(sandbox)["time"]["calls"] == 3  # the declined one never reached it


def test_yes_flag_approves_mcp_calls_like_commands(
    sandbox: Sandbox, model: FakeModelServer, harnessd: subprocess.Popen[bytes]
) -> None:
    use_servers(sandbox, {"time": stdio_server(TIME)})
    model.add(Reply(tool_calls=[NOW]), Reply(content="done"))
    events = run_streamed(sandbox, "n\n", "-y")
    assert '"datetime"' in tool_results(model)[0]
    resolved = of_kind(events, "approval.resolved")
    assert all(r["decision"] == "yes" for r in resolved)


def test_an_untrusted_project_mcp_json_starts_nothing_until_trusted(
    sandbox: Sandbox, model: FakeModelServer, harnessd: subprocess.Popen[bytes]
) -> None:
    marker = sandbox.root / "project-server-ran"
    script = f"touch '{marker}'; exec '{TIME}'"
    servers = {"proj": {"command": "/bin/sh", "args": ["-c", script]}}
    (sandbox.workspace / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    model.add(Reply(content="nothing to call"))
    result = harness(sandbox, "-p", "hello")
    assert result.returncode == 0, result.stderr
    assert not any(name.startswith("mcp__proj__") for name in offered_tools(model))
    assert "proj" not in mcp_list(sandbox, sandbox.workspace)
    assert not marker.exists()

    trusted = harness(sandbox, "trust", "-y")
    assert trusted.returncode == 0, trusted.stderr
    assert ".mcp.json" in trusted.stderr
    model.add(
        Reply(tool_calls=[tool_call("mcp__proj__get_current_time", timezone="UTC")]),
        Reply(content="done"),
    )
    result = harness(sandbox, "-y", "-p", "what time is it?")
    assert result.returncode == 0, result.stderr
    assert marker.exists()
    assert '"datetime"' in tool_results(model)[0]
    listed = mcp_list(sandbox, sandbox.workspace)["proj"]
    assert (listed["scope"], listed["state"]) == ("project", "ready")
