"""`harness --worktree` without a prompt: the REPL works in the worktree, and
`/worktree` lists, diffs, merges and removes worktrees over its connection."""

from __future__ import annotations

from pathlib import Path

from coding_harness.client.args import OneShotOptions
from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.git_repos import STORY, make_repo, run_git, write_identity
from tests.support.repl_run import ReplRun

EDITED = STORY.replace("line 3\n", "line three\n")


def test_the_repl_in_a_worktree_and_its_worktree_command(
    sandbox: Sandbox, model: FakeModelServer, repl_env: None
) -> None:
    write_identity(sandbox.home)
    repo = make_repo(sandbox.root / "repo", sandbox.env)
    model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="story.txt", old=STORY, new=EDITED)]),
        Reply(content="Edited line three."),
    )
    run = ReplRun(OneShotOptions(cwd=str(repo), plain=True, worktree="r"))
    try:
        run.type("edit line 3\n")
        run.wait_for("Apply this change?", "screen")
        run.type("y\n")
        run.wait_for("Edited line three.")
        folder = sandbox.root / "state" / "coding-harness" / "worktrees" / "r"
        assert (folder / "story.txt").read_text() == EDITED
        assert (repo / "story.txt").read_text() == STORY
        run.type("/worktree\n")
        run.wait_for("harness/r")
        assert "1 file changed" in run.out.text()
        run.type("/worktree diff r\n")
        run.wait_for("+line three")
        run.type("/worktree merge\n")
        run.wait_for("usage: /worktree", "err")
        run.type("/worktree merge r\n")
        run.wait_for("merged harness/r into main", "err")
        assert (repo / "story.txt").read_text() == EDITED
        run.type("/worktree rm r\n")
        run.wait_for("removed worktree r and branch harness/r", "err")
        assert run.finish() == 0
    finally:
        run.pipe.close()
    assert not Path(folder).exists()
    assert "harness/r" not in run_git(repo, "branch", "--list", env=sandbox.env)
