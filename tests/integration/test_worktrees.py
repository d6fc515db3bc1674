"""`--worktree` and `harness worktree list|diff|merge|rm`, end to end: the real
`harness` command and daemon, the fake model server, real git repositories."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import Reply, tool_call
from tests.support.git_repos import STORY, make_repo, run_git, write_identity
from tests.support.keyed_model import RoutedModelServer
from tests.support.processes import run_harness, start_harness

ALPHA = STORY.replace("line 1\n", "alpha line 1\n")
BRAVO = STORY.replace("line 6\n", "bravo line 6\n")
CHARLIE = STORY.replace("line 1\n", "charlie line 1\n")


def edit_story(new: str, said: str) -> list[Reply | object]:
    return [
        Reply(tool_calls=[tool_call("propose_edit", path="story.txt", old=STORY, new=new)]),
        Reply(content=said),
    ]


@pytest.fixture
def routes() -> dict[str, list[object]]:
    """What the model answers, by a key in the task (filled in by each test)."""
    return {}


@pytest.fixture
def routed(sandbox: Sandbox, routes: dict[str, list[object]]) -> Iterator[RoutedModelServer]:
    server = RoutedModelServer(routes).start()  # type: ignore[arg-type]
    sandbox.write_config(server.endpoint)
    write_identity(sandbox.home)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def repo(sandbox: Sandbox, routed: RoutedModelServer, daemon: object) -> Path:
    return make_repo(sandbox.root / "repo", sandbox.env)


def harness(
    sandbox: Sandbox, *args: str, cwd: Path, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    return run_harness(list(args), env=sandbox.env, cwd=cwd, input=input)


def git(sandbox: Sandbox, repo: Path, *args: str) -> str:
    return run_git(repo, *args, env=sandbox.env)


def worktree_folder(sandbox: Sandbox, name: str) -> Path:
    return sandbox.root / "state" / "coding-harness" / "worktrees" / name


def start_oneshot(sandbox: Sandbox, repo: Path, *args: str) -> subprocess.Popen[str]:
    return start_harness(list(args), env=sandbox.env, cwd=repo)


def test_three_parallel_worktrees_then_list_diff_merge_and_rm(
    sandbox: Sandbox, routes: dict[str, list[object]], repo: Path
) -> None:
    routes.update(
        {
            "task alpha": edit_story(ALPHA, "Alpha done."),
            "task bravo": edit_story(BRAVO, "Bravo done."),
            "task charlie": edit_story(CHARLIE, "Charlie done."),
        }
    )
    runs = {
        name: start_oneshot(sandbox, repo, "-y", "-p", f"task {name}", f"--worktree={name}")
        for name in ("alpha", "bravo", "charlie")
    }
    for name, process in runs.items():
        _, err = process.communicate(timeout=90)
        assert process.returncode == 0, f"{name}: {err}"
        assert f"worktree {name} on harness/{name} (from main)" in err
    assert (repo / "story.txt").read_text() == STORY  # the user's tree is untouched
    assert git(sandbox, repo, "status", "--porcelain") == ""
    for name, text in (("alpha", ALPHA), ("bravo", BRAVO), ("charlie", CHARLIE)):
        assert (worktree_folder(sandbox, name) / "story.txt").read_text() == text

    listed = harness(sandbox, "worktree", "list", cwd=repo)
    assert listed.returncode == 0, listed.stderr
    rows = {line.split()[0]: line.split() for line in listed.stdout.splitlines()[1:]}
    assert set(rows) == {"alpha", "bravo", "charlie"}
    assert all(row[1] == "changed" for row in rows.values())
    sessions = harness(sandbox, "sessions", cwd=repo)
    assert "(worktree alpha)" in sessions.stdout

    diff = harness(sandbox, "worktree", "diff", "alpha", cwd=repo)
    assert diff.returncode == 0, diff.stderr
    assert "-line 1\n+alpha line 1\n" in diff.stdout

    head_before = git(sandbox, repo, "rev-parse", "HEAD")
    merged = harness(sandbox, "worktree", "merge", "alpha", cwd=repo)
    assert merged.returncode == 0, merged.stderr
    assert "merged harness/alpha into main" in merged.stderr
    assert harness(sandbox, "worktree", "merge", "bravo", cwd=repo).returncode == 0
    both = ALPHA.replace("line 6\n", "bravo line 6\n")
    assert (repo / "story.txt").read_text() == both
    assert git(sandbox, repo, "rev-parse", "HEAD~2") == head_before

    head = git(sandbox, repo, "rev-parse", "HEAD")
    conflict = harness(sandbox, "worktree", "merge", "charlie", cwd=repo)
    assert conflict.returncode == 1
    assert "harness/charlie conflicts with main in 1 file" in conflict.stderr
    assert "conflict: story.txt" in conflict.stderr
    assert (repo / "story.txt").read_text() == both  # the main tree is as it was
    assert git(sandbox, repo, "rev-parse", "HEAD") == head
    assert git(sandbox, repo, "status", "--porcelain") == ""
    assert not (repo / ".git" / "MERGE_HEAD").exists()

    refused = harness(sandbox, "worktree", "rm", "charlie", cwd=repo)
    assert refused.returncode == 1
    assert "refused: worktree charlie has 1 commit not merged into main" in refused.stderr
    assert worktree_folder(sandbox, "charlie").is_dir()
    forced = harness(sandbox, "worktree", "rm", "charlie", "--force", cwd=repo)
    assert forced.returncode == 0, forced.stderr
    assert "brings the commits back" in forced.stderr
    assert not worktree_folder(sandbox, "charlie").exists()
    assert "harness/charlie" not in git(sandbox, repo, "branch", "--list")

    bravo_session = json.loads(harness(sandbox, "worktree", "list", "--json", cwd=repo).stdout)
    short = next(w for w in bravo_session["worktrees"] if w["name"] == "bravo")["session"]
    short = short.rsplit("-", 1)[-1]
    for wanted in ("alpha", short):  # merged: removed without --force, by name or session
        gone = harness(sandbox, "worktree", "rm", wanted, cwd=repo)
        assert gone.returncode == 0, gone.stderr
    assert harness(sandbox, "worktree", "list", cwd=repo).stdout.startswith("no worktrees")
    assert git(sandbox, repo, "worktree", "list").count("\n") == 1
