"""The daemon's MCP server processes over their life: shared, restarted, stopped.

Sessions talk to the daemon over the protocol client here, so a test sees the
`mcp.state` events of the session and keeps sessions open side by side. Three
sessions using the same two stdio servers run two server processes, not six; a
server killed mid-session is restarted and the session's next call works; and
no server outlives the daemon that started it.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from typing import Any

import psutil
import pytest

from coding_harness.protocol.client import Connection
from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.mcp_setup import (
    GIT,
    TIME,
    daemon_with_servers,
    mcp_list,
    server_processes,
    stdio_server,
    tool_results,
    use_servers,
)
from tests.support.processes import client, events_until_finished, wait_for_event
from tests.support.waiting import wait_for

PROGRAMS = ["mcp-server-git", "mcp-server-time"]
NOW = tool_call("mcp__time__get_current_time", timezone="UTC")


@pytest.fixture
def harnessd(sandbox: Sandbox, model: FakeModelServer) -> Iterator[subprocess.Popen[bytes]]:
    with daemon_with_servers(sandbox) as process:
        yield process


def open_session(conn: Connection, sandbox: Sandbox) -> str:
    session: str = conn.request("session.create", {"cwd": str(sandbox.workspace)})["session"]
    conn.request("session.attach", {"session": session})
    return session


def run_turn(conn: Connection, session: str, text: str) -> list[dict[str, Any]]:
    conn.request("session.submit", {"session": session, "text": text})
    events = events_until_finished(conn)
    assert events[-1]["data"]["exit_code"] == 0, events[-1]
    return events


def mcp_states(events: list[dict[str, Any]], name: str) -> list[str]:
    return [
        e["data"]["state"] for e in events if e["kind"] == "mcp.state" and e["data"]["name"] == name
    ]


def test_a_killed_server_is_restarted_and_the_next_call_works(
    sandbox: Sandbox, model: FakeModelServer, harnessd: subprocess.Popen[bytes]
) -> None:
    use_servers(sandbox, {"time": stdio_server(TIME, approve="never")})
    model.add(
        Reply(tool_calls=[NOW]), Reply(content="first"),
        Reply(tool_calls=[NOW]), Reply(content="second"),
    )  # fmt: skip
    with client(sandbox.socket) as conn:
        session = open_session(conn, sandbox)
        first = run_turn(conn, session, "what time is it?")
        assert "ready" in mcp_states(first, "time")
        listed = mcp_list(sandbox)["time"]
        assert listed["state"] == "ready" and listed["tools"] == [
            "get_current_time",
            "convert_time",
        ]
        killed = listed["pid"]
        os.kill(killed, signal.SIGKILL)
        # The daemon notices by itself, between turns, and says so to the session.
        crashed = wait_for_event(conn, "mcp.state", name="time", state="failed")
        assert crashed["data"]["error"]

        second = run_turn(conn, session, "and now?")
    assert '"datetime"' in tool_results(model)[-1]
    assert mcp_states(second, "time")[-1:] == ["ready"]
    again = mcp_list(sandbox)["time"]
    assert again["state"] == "ready" and again["pid"] not in (None, killed)
    assert psutil.pid_exists(again["pid"])


def test_a_server_started_while_another_runs_survives_its_start(
    sandbox: Sandbox, model: FakeModelServer, harnessd: subprocess.Popen[bytes]
) -> None:
    """The daemon sweeps away processes its tool commands left behind: a server that
    starts (a second one, or one restarted) while another runs is not such a process."""
    use_servers(sandbox, {"time": stdio_server(TIME, approve="never")})
    model.add(Reply(tool_calls=[NOW]), Reply(content="first"))
    with client(sandbox.socket) as conn:
        session = open_session(conn, sandbox)
        run_turn(conn, session, "what time is it?")
        use_servers(
            sandbox,
            {
                "time": stdio_server(TIME, approve="never"),
                "later": stdio_server(TIME, approve="never", env={"STARTED": "later"}),
            },
        )
        model.add(
            Reply(tool_calls=[tool_call("mcp__later__get_current_time", timezone="UTC")]),
            Reply(content="second"),
        )
        second = run_turn(conn, session, "and by the other clock?")
    assert '"datetime"' in tool_results(model)[-1]
    assert "failed" not in mcp_states(second, "later")
    assert mcp_list(sandbox)["later"]["state"] == "ready"


def test_three_sessions_share_two_server_processes_which_stop_with_the_daemon(
    sandbox: Sandbox, model: FakeModelServer, harnessd: subprocess.Popen[bytes]
) -> None:
    repo = sandbox.root / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, env=sandbox.env, check=True)
    use_servers(
        sandbox,
        {
            "time": stdio_server(TIME, approve="never"),
            "git": stdio_server(GIT, "--repository", str(repo), approve="never"),
        },
    )
    both = [NOW, tool_call("mcp__git__git_status", repo_path=str(repo))]
    with client(sandbox.socket) as conn:
        sessions = [open_session(conn, sandbox) for _ in range(3)]
        for number, session in enumerate(sessions):
            model.add(Reply(tool_calls=both), Reply(content=f"session {number} done"))
            run_turn(conn, session, "time and status, please")
            now, status = tool_results(model)
            assert '"datetime"' in now and "branch" in status.lower()
        servers = server_processes(harnessd.pid, *PROGRAMS)
        lines = [" ".join(p.cmdline()) for p in servers]
        assert sorted(n for line in lines for n in PROGRAMS if n in line) == PROGRAMS, lines
        listed = mcp_list(sandbox)
        assert (listed["time"]["calls"], listed["git"]["calls"]) == (3, 3)

    harnessd.send_signal(signal.SIGTERM)
    harnessd.wait(timeout=15)
    wait_for(lambda: not any(p.is_running() for p in servers), "the servers to stop", within=10)
