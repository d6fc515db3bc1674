"""A task's repository on the runner: the cache of each URL and the task's worktree.

Each repository a task names is kept once per runner, as a bare repository
under the state folder (`hub/repos/HASH.git`), fetched before every task (its
branches as `refs/remotes/origin/*`, so no fetch ever touches a branch a task
has checked out). A task works in a fresh `git worktree` of that cache at its
ref (a branch of the repository, a tag or a commit), on its own branch
`harness/task-ID` (`-N` added for attempt N after the first), in
`hub/tasks/ID-ATTEMPT`. Every git command goes through `worktrees/git.py`: no
shell, a clean environment, no hooks. A task's URL and ref come from any hub
member, so neither may start with `-`, and only the network transports (https,
http, ssh, git) are allowed; a local path or `file://` URL only when the
runner's `repos` names it exactly (never through `"*"`), so a member cannot
have a runner read the repositories on its disk.
"""

from __future__ import annotations

import asyncio
import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path

from coding_harness.daemon.worktrees.git import GitFailed, git, git_ok, repo_lock

BRANCH_PREFIX = "harness/task-"
_NETWORK = ("https", "http", "ssh", "git")
_REFSPECS = ("+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*")
FETCH_SECONDS = 600.0


class TaskRepoFailed(Exception):
    """The task's repository could not be made ready; one line saying why."""


@dataclass(frozen=True, kw_only=True, slots=True)
class TaskTree:
    """A task's worktree: where it is, its branch, and the commit it started from."""

    cache: Path
    path: Path
    branch: str
    base: str


def transports(repo: str, listed: tuple[str, ...]) -> tuple[str, ...]:
    """git `-c` settings allowing the transports `repo` may use on this runner."""
    allowed = [*_NETWORK, "file"] if repo in listed else list(_NETWORK)
    pairs = [("-c", f"protocol.{name}.allow=always") for name in allowed]
    return tuple(word for pair in pairs for word in pair)


def branch_of(task: int, attempt: int) -> str:
    return f"{BRANCH_PREFIX}{task}" + (f"-{attempt}" if attempt > 1 else "")


class RepoCache:
    """The bare repositories and the task worktrees under `root` (state/hub)."""

    def __init__(self, root: Path, listed: tuple[str, ...]) -> None:
        self.root = root
        self._listed = listed

    def cache_of(self, repo: str) -> Path:
        digest = hashlib.sha256(repo.encode("utf-8")).hexdigest()[:20]
        return self.root / "repos" / f"{digest}.git"

    async def prepare(self, repo: str, ref: str, task: int, attempt: int) -> TaskTree:
        """Fetch `repo` and make the task's worktree at `ref`; TaskRepoFailed if not."""
        for what, value in (("repository URL", repo), ("ref", ref)):
            if not value or value.startswith("-") or "\n" in value:
                raise TaskRepoFailed(f"the task's {what} {value!r} cannot be used")
        cache = self.cache_of(repo)
        path = self.root / "tasks" / f"{task}-{attempt}"
        branch = branch_of(task, attempt)
        try:
            async with repo_lock(str(cache)):
                await self._fetch(cache, repo)
                base = await self._resolve(cache, repo, ref)
                await _clear(cache, path, branch)
                await git_ok(cache, "worktree", "add", "--quiet", "-b", branch, str(path), base)
        except GitFailed as exc:
            raise TaskRepoFailed(str(exc)) from None
        return TaskTree(cache=cache, path=path, branch=branch, base=base)

    async def _fetch(self, cache: Path, repo: str) -> None:
        if not (cache / "HEAD").exists():
            cache.mkdir(parents=True, exist_ok=True, mode=0o700)  # noqa: ASYNC240 - one folder
            await git_ok(cache, "init", "--quiet", "--bare")
        done = await git(
            cache,
            *transports(repo, self._listed),
            "fetch", "--quiet", "--prune", "--no-write-fetch-head",
            "--end-of-options", repo, *_REFSPECS,
            seconds=FETCH_SECONDS,
        )  # fmt: skip
        if not done.ok:
            raise TaskRepoFailed(f"cannot fetch {repo}: {done.first_error()}")

    async def _resolve(self, cache: Path, repo: str, ref: str) -> str:
        for name in (f"refs/remotes/origin/{ref}", f"refs/tags/{ref}", ref):
            done = await git(
                cache, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{name}^{{commit}}"
            )
            if done.ok and done.out.strip():
                return done.out.strip()
        raise TaskRepoFailed(f"{repo} has no branch, tag or commit {ref!r}")

    async def sweep(self) -> None:
        """The worktrees a daemon that died mid-task left (their caches prune them later)."""
        await asyncio.to_thread(shutil.rmtree, self.root / "tasks", True)

    async def remove(self, tree: TaskTree) -> None:
        """The task's worktree goes (its branch stays in the cache)."""
        async with repo_lock(str(tree.cache)):
            await _clear(tree.cache, tree.path, None)


async def _clear(cache: Path, path: Path, branch: str | None) -> None:
    """A worktree left at `path` by an earlier run goes, and `branch` with it."""
    if path.exists():  # noqa: ASYNC240 - one stat
        await git(cache, "worktree", "remove", "--force", str(path))
        await asyncio.to_thread(shutil.rmtree, path, True)
    await git(cache, "worktree", "prune")
    if branch is not None:
        await git(cache, "branch", "--quiet", "-D", "--end-of-options", branch)


async def commit_all(tree: TaskTree, *, author: str, committer: str, message: str) -> bool:
    """Commit whatever the task changed on its branch; False when nothing did."""
    await git_ok(tree.path, "add", "--all")
    status = await git_ok(tree.path, "status", "--porcelain", "--untracked-files=no")
    if not status.strip():
        return False
    who, by = _identity(committer), _identity(author)
    await git_ok(
        tree.path,
        "-c", f"user.name={who[0]}", "-c", f"user.email={who[1]}",
        "commit", "--quiet", "--no-verify", f"--author={by[0]} <{by[1]}>", "-m", message,
    )  # fmt: skip
    return True


async def patch_of(tree: TaskTree) -> str:
    """The task's commits as `git format-patch` writes them ('' when there are none)."""
    return await git_ok(
        tree.path,
        "format-patch", "--stdout", "--binary", "--no-textconv", "--no-ext-diff",
        f"{tree.base}..HEAD",
    )  # fmt: skip


async def push(tree: TaskTree, repo: str, listed: tuple[str, ...]) -> str | None:
    """Push the task's branch to `repo`; None when done, else git's reason."""
    done = await git(
        tree.path,
        *transports(repo, listed),
        "push", "--quiet", "--no-verify", "--end-of-options", repo,
        f"HEAD:refs/heads/{tree.branch}",
        seconds=FETCH_SECONDS,
    )  # fmt: skip
    return None if done.ok else done.first_error()


def _identity(person: str) -> tuple[str, str]:
    """A person's name for git, and an address: theirs when it looks like one."""
    name = person.replace("<", "").replace(">", "").strip() or "harness"
    return name, name
