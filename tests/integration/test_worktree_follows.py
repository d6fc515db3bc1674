"""A session in a worktree works there, and only there: its tools read the worktree's
files and refuse the main tree's, the code index and the check follow it, undo puts
back its files, and the sandbox lets a recipe write the worktree but not git's
folders (the worktree's `.git` file, the main repository's hooks) nor the main tree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coding_harness.daemon.tools.shell.sandbox import probe
from tests.integration.conftest import Sandbox
from tests.integration.test_code_index import ready_map, ready_status
from tests.integration.test_worktrees import git, harness, routed, routes, worktree_folder
from tests.support.fake_model_server import Reply, tool_call
from tests.support.git_repos import STORY, make_repo
from tests.support.keyed_model import RoutedModelServer
from tests.support.processes import client

__all__ = ["routed", "routes"]  # the fixtures, shared with test_worktrees.py

LIB = "def greet():\n    return 'hi'\n"
EDITED = STORY + "edited\n"


def tool_results(model: RoutedModelServer) -> list[str]:
    return [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]


def test_tools_index_check_and_undo_follow_the_worktree(
    sandbox: Sandbox, routes: dict[str, list[object]], routed: RoutedModelServer, daemon: object
) -> None:
    files = {"story.txt": STORY, "lib.py": LIB, "Makefile": "check:\n\tgrep -q edited story.txt\n"}
    repo = make_repo(sandbox.root / "repo", sandbox.env, files)
    (repo / "story.txt").write_text("my own change\n")  # not in the worktree's branch
    routes["task follow"] = [
        Reply(tool_calls=[tool_call("read_file", path="story.txt")]),
        Reply(tool_calls=[tool_call("read_file", path=str(repo / "lib.py"))]),
        Reply(tool_calls=[tool_call("propose_edit", path="story.txt", old=STORY, new=EDITED)]),
        Reply(content="Done."),
    ]
    done = harness(
        sandbox, "-y", "--output-format", "json", "-p", "task follow", "--worktree=f", cwd=repo
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["check"]["passed"] is True  # `make check` ran in the worktree
    read, outside, _edit = tool_results(routed)
    assert "line 1" in read and "my own change" not in read
    assert "outside the workspace" in outside
    worktree = worktree_folder(sandbox, "f")
    assert (worktree / "story.txt").read_text() == EDITED
    assert (repo / "story.txt").read_text() == "my own change\n"

    undone = harness(sandbox, "undo", "--session", result["session"], cwd=repo)
    assert undone.returncode == 0, undone.stderr
    assert (worktree / "story.txt").read_text() == STORY


PROBE_RECIPE = """\
GITDIR := $(shell sed -n 's/^gitdir: //p' .git)
check:
\techo made > made.txt
\t-echo x > .git 2>/dev/null && echo GITFILE-WRITTEN
\t-touch "$(GITDIR)/../../hooks/pwned" 2>/dev/null && echo HOOK-WRITTEN
\t-touch "{repo}/escaped.txt" 2>/dev/null && echo MAIN-WRITTEN
\techo PROBE-END
"""


@pytest.mark.skipif(not probe().usable, reason=f"no sandbox here: {probe().reason}")
def test_the_sandbox_writes_the_worktree_and_keeps_git_read_only(
    sandbox: Sandbox, routes: dict[str, list[object]], routed: RoutedModelServer, daemon: object
) -> None:
    repo = sandbox.root / "repo"
    make_repo(repo, sandbox.env, {"Makefile": PROBE_RECIPE.format(repo=repo)})
    config = json.loads((sandbox.home / ".coding_harness.json").read_text())
    config["agent"] = {"sandbox": "required"}
    (sandbox.home / ".coding_harness.json").write_text(json.dumps(config))
    routes["task probe"] = [
        Reply(tool_calls=[tool_call("run_shell", command="make check")]),
        Reply(content="Probed."),
    ]
    done = harness(sandbox, "-y", "-p", "task probe", "--worktree=s", cwd=repo)
    assert done.returncode == 0, done.stderr
    [output] = tool_results(routed)
    assert "PROBE-END" in output, output
    worktree = worktree_folder(sandbox, "s")
    assert (worktree / "made.txt").read_text() == "made\n"
    lines = output.splitlines()
    assert "GITFILE-WRITTEN" not in lines and "HOOK-WRITTEN" not in lines, output
    assert (worktree / ".git").read_text().startswith("gitdir: ")
    assert not (repo / ".git" / "hooks" / "pwned").exists()
    assert not (repo / "escaped.txt").exists()
    assert git(sandbox, worktree, "status", "--porcelain") == "?? made.txt\n"


def test_session_create_on_the_wire_and_the_session_summary(
    sandbox: Sandbox, routed: RoutedModelServer, daemon: object
) -> None:
    repo = make_repo(sandbox.root / "repo", sandbox.env, {"story.txt": STORY, "lib.py": LIB})
    conn = client(sandbox.socket)
    try:
        created = conn.request("session.create", {"cwd": str(repo), "worktree": True})
        worktree = created["worktree"]
        short = created["session"].rsplit("-", 1)[-1]
        assert worktree["name"] == short  # a generated name: the session's short id
        assert worktree["branch"] == f"harness/{short}"
        assert worktree["base"] == "main"
        assert created["cwd"] == worktree["path"] == str(worktree_folder(sandbox, short))
        [listed] = conn.request("session.list")["sessions"]
        assert listed["worktree"] == {
            "name": short,
            "branch": f"harness/{short}",
            "path": worktree["path"],
        }
        built = ready_map(conn, created["session"])  # the code index is the worktree's
        assert "lib.py" in json.dumps(built) and "greet" in json.dumps(built)
        roots = [index["root"] for index in ready_status(conn)]
        assert roots == [worktree["path"]]
        plain = conn.request("session.create", {"cwd": str(repo)})
        assert "worktree" not in plain
        rows = {s["session"]: s for s in conn.request("session.list")["sessions"]}
        assert rows[plain["session"]]["worktree"] is None
    finally:
        conn.close()
    assert Path(worktree["path"], "story.txt").read_text() == STORY
