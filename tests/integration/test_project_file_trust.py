"""Trust follows the bytes, not the path (issue 25, items 4 and 6): through the real daemon
and the real `harness` command, a project file that is a symbolic link to a file the user
trusted elsewhere is refused, never read (its hooks do not run, its MCP servers do not
start, `harness trust` will not trust it); trusting one workspace never trusts another
with the same bytes; a project's `debug` never turns the debug log on."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply
from tests.support.mcp_setup import daemon_with_servers
from tests.support.processes import run_harness

PROJECT = ".local_coding_harness.json"


def harness(
    sandbox: Sandbox, *args: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return run_harness(list(args), env=sandbox.env, cwd=cwd or sandbox.workspace, input="")


def hook_config(marker: Path) -> dict[str, object]:
    """A project file whose hook leaves `marker` when it runs."""
    return {"hooks": {"UserPromptSubmit": [{"command": f"touch '{marker}'"}]}}


def trusted_elsewhere(sandbox: Sandbox, name: str, data: object) -> Path:
    """`name` in another project of the user's, trusted there with `harness trust -y`."""
    other = sandbox.root / "trusted-project"
    other.mkdir(exist_ok=True)
    path = other / name
    path.write_text(json.dumps(data))
    done = harness(sandbox, "trust", "-y", cwd=other)
    assert done.returncode == 0, done.stderr
    return path


def test_a_symlinked_project_file_gets_no_trust_and_its_hooks_do_not_run(
    sandbox: Sandbox, model: FakeModelServer, daemon: subprocess.Popen[bytes]
) -> None:
    marker = sandbox.root / "hook-ran"
    target = trusted_elsewhere(sandbox, PROJECT, hook_config(marker))
    link = sandbox.workspace / PROJECT
    link.symlink_to(target)
    model.add(Reply(content="hello"))
    result = harness(sandbox, "-p", "hello")
    assert result.returncode == 0, result.stderr
    assert not marker.exists()
    assert f"{link} is a symbolic link (to {target})" in result.stderr
    assert "replace the link with a copy" in result.stderr

    refused = harness(sandbox, "trust", "-y")
    assert refused.returncode == 1
    assert "already trusted" not in refused.stderr
    assert f"{link} is a symbolic link" in refused.stderr
    model.add(Reply(content="hello again"))
    assert harness(sandbox, "-p", "hello").returncode == 0
    assert not marker.exists()


def test_a_symlinked_mcp_json_starts_no_server(sandbox: Sandbox, model: FakeModelServer) -> None:
    marker = sandbox.root / "server-ran"
    server = {"command": "/bin/sh", "args": ["-c", f"touch '{marker}'"], "approve": "never"}
    target = trusted_elsewhere(sandbox, ".mcp.json", {"mcpServers": {"helper": server}})
    link = sandbox.workspace / ".mcp.json"
    link.symlink_to(target)
    with daemon_with_servers(sandbox):
        listed = json.loads(harness(sandbox, "mcp", "list", "--json").stdout)["servers"]
        assert "helper" not in {entry["name"] for entry in listed}
        model.add(Reply(content="no servers"))
        result = harness(sandbox, "-p", "hello")
        assert result.returncode == 0, result.stderr
        assert f"{link} is a symbolic link (to {target})" in result.stderr
        refused = harness(sandbox, "trust", "-y")
        assert refused.returncode == 1 and "already trusted" not in refused.stderr
    assert not marker.exists()


def test_trusting_one_workspace_does_not_trust_another_with_the_same_bytes(
    sandbox: Sandbox, model: FakeModelServer, daemon: subprocess.Popen[bytes]
) -> None:
    marker = sandbox.root / "hook-ran"
    trusted_elsewhere(sandbox, PROJECT, hook_config(marker))
    (sandbox.workspace / PROJECT).write_text(json.dumps(hook_config(marker)))
    model.add(Reply(content="hello"))
    result = harness(sandbox, "-p", "hello")
    assert result.returncode == 0, result.stderr
    assert not marker.exists()
    assert "harness trust" in result.stderr
    asked = harness(sandbox, "trust")  # not "already trusted": asked, and no answer
    assert asked.returncode == 1 and "already trusted" not in asked.stderr


def test_a_projects_debug_never_turns_the_debug_log_on(
    sandbox: Sandbox, model: FakeModelServer, daemon: subprocess.Popen[bytes]
) -> None:
    path = sandbox.workspace / PROJECT
    path.write_text(json.dumps({"debug": True}))
    debug_folder = sandbox.root / "state" / "coding-harness" / "debug"
    for trusted in (False, True):
        if trusted:
            assert harness(sandbox, "trust", "-y").returncode == 0
        model.add(Reply(content="quiet"))
        result = harness(sandbox, "-p", "hello")
        assert result.returncode == 0, result.stderr
        assert "debug:" not in result.stderr.replace(f"{path}: debug ignored", "")
        assert f"{path}: debug ignored, trusted or not" in result.stderr
        assert not debug_folder.exists()
