"""`harness mcp list|restart`, `harness doctor` and `harness trust` on MCP servers, run as
a user runs them against the real daemon and the real `mcp-server-time` from PyPI.

(`/mcp` in the REPL has its real-terminal cases in test_repl_terminal.py.)
"""

from __future__ import annotations

import json
import subprocess

import psutil

from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.mcp_setup import TIME, daemon_with_servers, stdio_server, use_servers
from tests.support.processes import run_harness

TIME_TOOLS = ["get_current_time", "convert_time"]


def harness(
    sandbox: Sandbox, *args: str, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    return run_harness(list(args), env=sandbox.env, cwd=sandbox.workspace, input=input)


def rows(listing: str) -> dict[str, list[str]]:
    """The table's rows by server name, split on whitespace (header left out)."""
    return {line.split()[0]: line.split() for line in listing.splitlines()[1:] if line.strip()}


def test_list_restart_and_json_through_the_real_daemon(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    use_servers(sandbox, {"time": stdio_server(TIME, "--local-timezone", "UTC")})
    with daemon_with_servers(sandbox) as daemon:
        before = harness(sandbox, "mcp", "list")
        assert before.returncode == 0, before.stderr
        assert before.stdout.splitlines()[0].split() == [
            *("NAME", "STATE", "PID", "TOOLS", "STARTED", "ERROR")
        ]
        assert rows(before.stdout)["time"][:4] == ["time", "stopped", "-", "0"]

        restarted = harness(sandbox, "mcp", "restart", "time")
        assert restarted.returncode == 0, restarted.stderr
        assert restarted.stdout.startswith("time: ready (pid ") and "2 tools" in restarted.stdout

        after = harness(sandbox, "mcp", "list")
        row = rows(after.stdout)["time"]
        assert row[1] == "ready" and row[3:6] == ["2:", "get_current_time,", "convert_time"]
        as_json = json.loads(harness(sandbox, "mcp", "list", "--json").stdout)
        (server,) = as_json["servers"]
        assert sorted(server["tools"]) == sorted(TIME_TOOLS)
        assert server["transport"] == "stdio" and server["scope"] == "user"
        assert server["command"] == TIME and server["pid"] == int(row[2])
        assert psutil.Process(server["pid"]).is_running()

        unknown = harness(sandbox, "mcp", "restart", "tyme")
        assert unknown.returncode == 5
        assert "tyme" in unknown.stderr and "time" in unknown.stderr.replace("tyme", "")
        pid = server["pid"]
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert daemon.returncode is not None


def test_a_server_that_cannot_start_is_failed_with_its_error(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    use_servers(sandbox, {"broken": stdio_server(str(sandbox.root / "no-such-server"))})
    with daemon_with_servers(sandbox):
        failed = harness(sandbox, "mcp", "restart", "broken")
        assert failed.returncode == 1, failed.stderr
        assert failed.stdout.startswith("broken: failed: ")
        listed = harness(sandbox, "mcp", "list")
        assert rows(listed.stdout)["broken"][1] == "failed"


def test_no_daemon_and_bad_arguments(sandbox: Sandbox) -> None:
    (sandbox.socket.parent).mkdir(parents=True, mode=0o700)
    sandbox.socket.mkdir()  # a folder where the socket should be: no daemon can start
    unreachable = harness(sandbox, "mcp", "list")
    assert unreachable.returncode == 4 and "cannot reach the daemon" in unreachable.stderr
    assert harness(sandbox, "mcp").returncode == 5
    assert harness(sandbox, "mcp", "restart").returncode == 5


def test_doctor_names_a_missing_mcp_command_and_its_fix(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    use_servers(
        sandbox,
        {"time": stdio_server(TIME), "gone": stdio_server("mcp-server-that-is-not-installed")},
    )
    done = harness(sandbox, "doctor")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    (missing,) = [n for n, line in enumerate(lines) if "mcp_servers.gone" in line]
    assert lines[missing].startswith("PROBLEM")
    assert "mcp-server-that-is-not-installed is not found on PATH" in lines[missing]
    assert "fix: install mcp-server-that-is-not-installed" in lines[missing + 1]
    assert any(line.startswith("ok") and f"mcp_servers.time: runs {TIME}" in line for line in lines)


def test_trust_records_mcp_json_and_then_the_daemon_lists_its_server(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    mcp_json = sandbox.workspace / ".mcp.json"
    mcp_json.write_text(json.dumps({"mcpServers": {"clock": stdio_server(TIME)}}))
    with daemon_with_servers(sandbox):
        untrusted = harness(sandbox, "mcp", "list", "--json")
        assert "clock" not in {s["name"] for s in json.loads(untrusted.stdout)["servers"]}
        doctor = harness(sandbox, "doctor")
        assert "MCP servers clock not checked: not trusted: run harness trust" in doctor.stdout

        declined = harness(sandbox, "trust", input="n\n")
        assert declined.returncode == 1
        assert f"clock: runs {TIME}   <- needs trust" in declined.stderr
        accepted = harness(sandbox, "trust", input="y\n")
        assert accepted.returncode == 0, accepted.stderr
        assert f"trusted {mcp_json}" in accepted.stderr
        store = sandbox.root / "state" / "coding-harness" / "trusted_workspaces.json"
        assert ".mcp.json" in json.loads(store.read_text())[str(sandbox.workspace.resolve())]

        listed = json.loads(harness(sandbox, "mcp", "list", "--json").stdout)["servers"]
        (clock,) = [s for s in listed if s["name"] == "clock"]
        assert clock["state"] == "stopped" and clock["scope"] == "project"
        assert harness(sandbox, "trust", "--revoke").returncode == 0
        assert json.loads(store.read_text()) == {}


def test_a_oneshot_run_says_when_a_server_it_uses_is_ready_or_failed(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    use_servers(
        sandbox,
        {
            "time": stdio_server(TIME, approve="never"),
            "broken": stdio_server(str(sandbox.root / "no-such-server"), approve="never"),
        },
    )
    model.add(
        Reply(tool_calls=[tool_call("mcp__time__get_current_time", timezone="UTC")]),
        Reply(content="It is now."),
    )
    with daemon_with_servers(sandbox):
        done = harness(sandbox, "-p", "what time is it?")
        assert done.returncode == 0, done.stderr
        assert "mcp: time ready" in done.stderr.splitlines()
        assert "starting" not in done.stderr  # a plain view has no spinner to label
        assert done.stderr.count("mcp: broken failed: ") == 1  # said once, not per retry
