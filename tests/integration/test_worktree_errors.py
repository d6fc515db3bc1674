"""Each way `--worktree` or `harness worktree` cannot do what was asked: one line
naming the fix, an exit code, and nothing lost (real git repositories, the real
`harness` command and daemon)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.integration.conftest import Sandbox
from tests.integration.test_worktrees import (
    ALPHA,
    edit_story,
    git,
    harness,
    repo,
    routed,
    routes,
    worktree_folder,
)
from tests.support.fake_model_server import Reply
from tests.support.git_repos import STORY

__all__ = ["repo", "routed", "routes"]  # the fixtures, shared with test_worktrees.py


def records(sandbox: Sandbox) -> Path:
    return sandbox.root / "state" / "coding-harness" / "worktrees.json"


def test_outside_a_git_repository_nothing_is_made(
    sandbox: Sandbox, routed: object, daemon: object
) -> None:
    plain = sandbox.root / "plain"
    plain.mkdir()
    result = harness(sandbox, "-p", "task", "--worktree", cwd=plain)
    assert result.returncode == 5
    assert f"--worktree needs a git repository, and {plain} is not in one; run `git init`" in (
        result.stderr
    )
    assert not records(sandbox).exists()
    assert not (sandbox.root / "state" / "coding-harness" / "worktrees").exists()


def test_a_repository_without_a_commit(sandbox: Sandbox, routed: object, daemon: object) -> None:
    empty = sandbox.root / "empty"
    empty.mkdir()
    git(sandbox, empty, "init", "--quiet")
    result = harness(sandbox, "-p", "task", "--worktree", cwd=empty)
    assert result.returncode == 5
    assert "has no commit yet, and a worktree starts from one; commit first" in result.stderr


def test_a_detached_head_is_refused(sandbox: Sandbox, repo: Path) -> None:
    git(sandbox, repo, "checkout", "--quiet", "--detach")
    result = harness(sandbox, "-p", "task", "--worktree=x", cwd=repo)
    assert result.returncode == 5
    assert "HEAD is detached" in result.stderr
    assert "check out a branch first (git switch BRANCH)" in result.stderr
    assert "harness/x" not in git(sandbox, repo, "branch", "--list")


def test_a_branch_name_taken_is_refused_and_kept(sandbox: Sandbox, repo: Path) -> None:
    (repo / "story.txt").write_text(ALPHA)
    git(sandbox, repo, "commit", "--quiet", "-am", "mine")
    git(sandbox, repo, "branch", "harness/taken")
    tip = git(sandbox, repo, "rev-parse", "harness/taken")
    git(sandbox, repo, "reset", "--quiet", "--hard", "HEAD~1")
    result = harness(sandbox, "-p", "task", "--worktree=taken", cwd=repo)
    assert result.returncode == 5
    assert "the branch harness/taken exists already" in result.stderr
    assert "pick another name (--worktree OTHER), or delete that branch" in result.stderr
    assert git(sandbox, repo, "rev-parse", "harness/taken") == tip
    assert not worktree_folder(sandbox, "taken").exists()


def test_a_name_taken_by_another_worktree(
    sandbox: Sandbox, routes: dict[str, list[object]], repo: Path
) -> None:
    routes["task one"] = edit_story(ALPHA, "Done.")
    assert harness(sandbox, "-y", "-p", "task one", "--worktree=one", cwd=repo).returncode == 0
    again = harness(sandbox, "-p", "task two", "--worktree=one", cwd=repo)
    assert again.returncode == 5
    assert "a worktree named one exists already" in again.stderr
    assert "harness worktree rm one" in again.stderr
    assert (worktree_folder(sandbox, "one") / "story.txt").read_text() == ALPHA


def test_bad_names_and_contradictions_are_refused_by_the_client(
    sandbox: Sandbox, repo: Path
) -> None:
    bad = harness(sandbox, "-p", "task", "--worktree=a..b", cwd=repo)
    assert bad.returncode == 5
    assert "is not a worktree name" in bad.stderr
    both = harness(sandbox, "-p", "task", "--worktree", "--session", "abc", cwd=repo)
    assert both.returncode == 5
    assert "--worktree makes a new session and --session opens one" in both.stderr
    unknown = harness(sandbox, "worktree", "diff", "nope", cwd=repo)
    assert unknown.returncode == 5
    assert "no worktree 'nope'; `harness worktree list` lists them" in unknown.stderr


def test_a_dirty_tree_is_said_and_kept_out_of_the_branch(
    sandbox: Sandbox, routes: dict[str, list[object]], repo: Path
) -> None:
    routes["task"] = [Reply(content="Nothing to do.")]
    (repo / "story.txt").write_text("my own change\n")
    result = harness(sandbox, "-p", "task", "--worktree=clean", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert "has uncommitted changes (1 file); the worktree's branch harness/clean starts" in (
        result.stderr
    )
    assert "without them: commit them first if the task needs them" in result.stderr
    assert (worktree_folder(sandbox, "clean") / "story.txt").read_text() == STORY
    assert (repo / "story.txt").read_text() == "my own change\n"


def test_a_folder_deleted_by_hand_keeps_its_commits(sandbox: Sandbox, repo: Path) -> None:
    made = harness(sandbox, "-p", "task", "--worktree=gone", cwd=repo, input="")
    folder = worktree_folder(sandbox, "gone")
    assert folder.is_dir(), made.stderr
    (folder / "story.txt").write_text(ALPHA)
    git(sandbox, folder, "commit", "--quiet", "-am", "work")
    shutil.rmtree(folder)

    listed = harness(sandbox, "worktree", "list", cwd=repo)
    assert listed.stdout.splitlines()[1].split()[:2] == ["gone", "missing"]
    session = json.loads(harness(sandbox, "worktree", "list", "--json", cwd=repo).stdout)
    again = harness(
        sandbox, "-p", "more", "--session", session["worktrees"][0]["session"], cwd=repo
    )
    assert again.returncode == 5
    assert "the worktree folder" in again.stderr and "was deleted by hand" in again.stderr
    assert "gone: the folder was deleted by hand; its branch harness/gone keeps" in listed.stderr
    diff = harness(sandbox, "worktree", "diff", "gone", cwd=repo)
    assert "is gone (deleted by hand)" in diff.stderr
    assert "+alpha line 1" in diff.stdout
    merged = harness(sandbox, "worktree", "merge", "gone", cwd=repo)
    assert merged.returncode == 0, merged.stderr
    assert (repo / "story.txt").read_text() == ALPHA  # nothing committed was lost
    removed = harness(sandbox, "worktree", "rm", "gone", cwd=repo)
    assert removed.returncode == 0, removed.stderr
    assert "gone" not in git(sandbox, repo, "worktree", "list")


def test_merge_into_a_tree_whose_changes_are_in_the_way_changes_nothing(
    sandbox: Sandbox, routes: dict[str, list[object]], repo: Path
) -> None:
    routes["task"] = edit_story(ALPHA, "Done.")
    assert harness(sandbox, "-y", "-p", "task", "--worktree=w", cwd=repo).returncode == 0
    (repo / "story.txt").write_text("mine, not committed\n")
    head = git(sandbox, repo, "rev-parse", "HEAD")
    refused = harness(sandbox, "worktree", "merge", "w", cwd=repo)
    assert refused.returncode == 1
    assert "git refused to merge into main" in refused.stderr
    assert "commit or stash your own changes there, then merge again" in refused.stderr
    assert (repo / "story.txt").read_text() == "mine, not committed\n"
    assert git(sandbox, repo, "rev-parse", "HEAD") == head
