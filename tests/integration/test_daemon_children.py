"""The daemon's own children are not "processes left behind by tool commands"
(issue 25, item 18): with an MCP server up, the process keeper scans every second;
a `notify.command` that runs a few seconds must finish and its output land.

Real daemon, real `mcp-server-time` from PyPI, the fake model, a real shell command.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support import waiting
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.mcp_setup import TIME, daemon_with_servers, mcp_list, use_servers
from tests.support.processes import client, events_until_finished, wait_for_event

pytestmark = pytest.mark.integration


def _configure(sandbox: Sandbox, **sections: Any) -> None:
    path = sandbox.home / ".coding_harness.json"
    config = json.loads(path.read_text())
    config.update(sections)
    path.write_text(json.dumps(config))


def test_a_slow_notify_command_finishes_while_an_mcp_server_is_up(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    (sandbox.workspace / "calc.py").write_text(BUGGY)
    model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="done"),
    )
    request, done = sandbox.root / "request.json", sandbox.root / "done.txt"
    # Longer than a few keeper scans (one a second while the server is up).
    command = f"cat > {request}; sleep 3; echo finished > {done}"
    use_servers(sandbox, {"time": {"command": TIME, "approve": "never", "start": "eager"}})
    _configure(
        sandbox,
        notify={"after_seconds": 0, "desktop": "off", "command": command},
        agent={"sandbox": "off", "approval_timeout": 120},
    )
    with daemon_with_servers(sandbox):
        waiting.wait_for(
            lambda: mcp_list(sandbox)["time"]["state"] == "ready", "the MCP server", within=30
        )
        with client(sandbox.socket) as conn:
            session = conn.request("session.create", {"cwd": str(sandbox.workspace)})["session"]
            conn.request("session.attach", {"session": session})
            conn.request("session.submit", {"session": session, "text": "fix"})
            asked = wait_for_event(conn, "approval.requested")["data"]
            waiting.wait_for(done.exists, "the notify command to finish", within=15)
            conn.request(
                "approval.respond",
                {"session": session, "request": asked["request"], "decision": "yes"},
            )
            assert events_until_finished(conn)[-1]["data"]["exit_code"] == 0
        assert mcp_list(sandbox)["time"]["state"] == "ready"  # the server was spared too
    assert done.read_text() == "finished\n"
    assert json.loads(request.read_text())["approval"] == asked["request"]
