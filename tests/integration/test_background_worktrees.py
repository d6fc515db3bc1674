"""Background tasks in worktrees of one repository at once, through the real `harness`
command: the three of issue 28's "done when". Fired from three shells with `--bg
--worktree`, one waits for an approval that `harness approve` gives, one fails its
check, and one is merged back into the branch it came from; the user's own tree
is never written by any of them."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support.fake_model_server import Reply, tool_call
from tests.support.git_repos import make_repo, run_git, write_identity
from tests.support.processes import client, run_harness, start_harness
from tests.support.routed_model import RoutedModelServer
from tests.support.waiting import wait_for

WRONG = "def add(a, b):\n    return a * b\n"
CHECK = f"check:\n\t{sys.executable} -c 'import calc; assert calc.add(2, 3) == 5, \"wrong\"'\n"


@pytest.fixture
def routed(sandbox: Sandbox) -> Iterator[RoutedModelServer]:
    server = RoutedModelServer().start()
    sandbox.write_config(server.endpoint, notes=False)
    try:
        yield server
    finally:
        server.stop()


def _fire(sandbox: Sandbox, repo: Path, *args: str) -> subprocess.Popen[str]:
    return start_harness(list(args), env=sandbox.env, cwd=repo)


def _short_id(process: subprocess.Popen[str]) -> str:
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    return out.strip()


def _harness(sandbox: Sandbox, repo: Path, *args: str, input: str | None = None) -> str:
    done = run_harness(list(args), env=sandbox.env, cwd=repo, input=input)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_three_background_tasks_in_three_worktrees_of_one_repository(
    sandbox: Sandbox, daemon: subprocess.Popen[bytes], routed: RoutedModelServer
) -> None:
    write_identity(sandbox.home)
    repo = make_repo(sandbox.root / "repo", sandbox.env, {"calc.py": BUGGY, "Makefile": CHECK})
    routed.route(
        "task-asking",
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="Fixed it."),
    )
    routed.route(
        "task-failing",
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=WRONG)]),
        Reply(content="The check still fails."),
    )
    routed.route(
        "task-merging",
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="Fixed."),
    )
    shells = [
        _fire(sandbox, repo, "--worktree=asking", "-p", "task-asking: fix calc.py", "--bg"),
        _fire(sandbox, repo, "--worktree=failing", "-y", "-p", "task-failing: fix it", "--bg"),
        _fire(sandbox, repo, "--worktree=merging", "-y", "-p", "task-merging: fix it", "--bg"),
    ]
    asking, failing, merging = (_short_id(shell) for shell in shells)

    waited = run_harness(["wait", failing], env=sandbox.env, cwd=repo)
    assert waited.returncode == 2, waited.stderr  # its check failed
    assert _harness(sandbox, repo, "wait", merging) == ""

    def waiting() -> bool:
        with client(sandbox.socket, "look", approvals=False) as conn:
            rows = conn.request("session.list")["sessions"]
        return any(r["short_id"] == asking and r["state"] == "waiting" for r in rows)

    wait_for(waiting, "the asking task's approval to wait")
    _harness(sandbox, repo, "approve", asking, input="y\n")
    assert _harness(sandbox, repo, "wait", asking) == ""

    listed = json.loads(_harness(sandbox, repo, "worktree", "list", "--json"))
    folders = {row["name"]: Path(row["path"]) for row in listed["worktrees"]}
    assert sorted(folders) == ["asking", "failing", "merging"]
    assert (folders["asking"] / "calc.py").read_text() == FIXED
    assert (folders["failing"] / "calc.py").read_text() == WRONG
    assert (repo / "calc.py").read_text() == BUGGY  # nothing wrote the user's tree

    _harness(sandbox, repo, "worktree", "merge", "merging")
    assert (repo / "calc.py").read_text() == FIXED
    assert run_git(repo, "status", "--porcelain", env=sandbox.env) == ""
    assert "harness/merging" in run_git(repo, "branch", "--merged", "main", env=sandbox.env)
