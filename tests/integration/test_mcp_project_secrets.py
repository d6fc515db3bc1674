"""A project's MCP server is never handed a secret of the session (issue 25, item 7):
through the real daemon, a trusted `.mcp.json` entry that reads `${GITHUB_TOKEN}` is
refused, with the file, the key and the fix named, and never started; the same entry in
the user's own file starts with the token in its environment."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply
from tests.support.mcp_setup import TIME, daemon_with_servers, use_servers
from tests.support.processes import run_harness
from tests.support.waiting import wait_for

TOKEN = "ghp_integration0123456789abcdef"


def harness(sandbox: Sandbox, *args: str) -> subprocess.CompletedProcess[str]:
    return run_harness(list(args), env=sandbox.env, cwd=sandbox.workspace, input="")


def token_server(seen: Path) -> dict[str, object]:
    """The time server, started by a shell that first writes the $GH it was given."""
    script = f"printf %s \"$GH\" > '{seen}'; exec '{TIME}'"
    return {
        "command": "/bin/sh",
        "args": ["-c", script],
        "env": {"GH": "${GITHUB_TOKEN}"},
        "approve": "never",
    }


def test_a_project_server_may_not_read_github_token_a_users_may(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    sandbox.env["GITHUB_TOKEN"] = TOKEN
    project_seen, user_seen = sandbox.root / "project-saw", sandbox.root / "user-saw"
    mcp_json = sandbox.workspace / ".mcp.json"
    mcp_json.write_text(json.dumps({"mcpServers": {"gh": token_server(project_seen)}}))
    use_servers(sandbox, {"mine": token_server(user_seen)})
    with daemon_with_servers(sandbox):
        assert harness(sandbox, "trust", "-y").returncode == 0
        model.add(Reply(content="done"))
        result = harness(sandbox, "-p", "hello")
        assert result.returncode == 0, result.stderr
        assert (
            f"{mcp_json}: mcpServers.gh.env reads ${{GITHUB_TOKEN}}, a secret the harness "
            "keeps from a project's servers; to hand it to this server, declare the server "
            "in your own ~/.coding_harness.json; this MCP server was left out"
        ) in result.stderr
        listed = json.loads(harness(sandbox, "mcp", "list", "--json").stdout)["servers"]
        assert {entry["name"] for entry in listed} == {"mine"}
        wait_for(user_seen.exists, "the user's server to start")
    assert user_seen.read_text() == TOKEN
    assert not project_seen.exists()
