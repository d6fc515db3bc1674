"""Merging a worktree's work into the branch it came from, never by force.

1. What the session left uncommitted in its worktree is committed on its branch
   (the worktree is the harness's; the user's own tree is not touched).
2. The merge is first made in memory (`git merge-tree --write-tree`): a
   conflict is reported with its files, and nothing else changes.
3. A clean merge is committed where the base branch is checked out (usually the
   user's main tree) with `git merge --no-ff`; git itself refuses when the
   user's uncommitted changes are in the way, and that refusal is reported,
   the tree as it was. A base branch checked out nowhere gets the merge commit
   without any tree touched (`commit-tree` and a checked `update-ref`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from coding_harness.daemon.worktrees.git import GitFailed, git, git_ok, repo_lock
from coding_harness.daemon.worktrees.records import WorktreeRecord
from coding_harness.daemon.worktrees.status import is_present, look


@dataclass(kw_only=True, slots=True)
class MergeOutcome:
    merged: bool
    message: str  # one line for the user
    conflicts: list[str] = field(default_factory=list)
    commit: str | None = None

    def wire(self) -> dict[str, object]:
        return {
            "merged": self.merged,
            "message": self.message,
            "conflicts": self.conflicts,
            "commit": self.commit,
        }


async def merge_worktree(record: WorktreeRecord) -> MergeOutcome:
    async with repo_lock(record.repo):
        return await _merge(record)


async def _merge(record: WorktreeRecord) -> MergeOutcome:
    repo, branch, base = Path(record.repo), record.branch, record.base
    if is_present(record):
        await _commit_pending(record)
    seen = await look(record)
    if not seen.branch_exists:
        raise GitFailed(f"the branch {branch} is gone; there is nothing left to merge")
    if not seen.base_exists:
        raise GitFailed(
            f"the branch {base} it came from is gone; merge it by hand: git merge {branch}"
        )
    if not seen.ahead:
        return MergeOutcome(merged=False, message=f"nothing to merge: {branch} has no change")
    trial = await git(repo, "merge-tree", "--write-tree", "--name-only", "--no-messages",
                      base, branch)  # fmt: skip
    if trial.code == 1:
        files = [line for line in trial.out.splitlines()[1:] if line.strip()]
        return MergeOutcome(
            merged=False,
            conflicts=files,
            message=(
                f"{branch} conflicts with {base} in {len(files)} file"
                f"{'' if len(files) == 1 else 's'}; nothing was merged and your tree is as it "
                f"was. Resolve it by hand (git merge {branch} in {repo}), or have the session "
                f"rebase on {base}"
            ),
        )
    if not trial.ok:
        raise GitFailed(f"git could not try the merge: {trial.first_error()}")
    message = f"Merge {branch} (harness session {record.session or record.name})"
    where = await _checked_out_at(repo, base)
    if where is None:
        tree = trial.out.splitlines()[0].strip()
        return await _commit_unchecked(repo, record, tree, message)
    done = await git(where, "merge", "--no-ff", "--no-edit", "-m", message, branch)
    if not done.ok:
        if (await git(where, "rev-parse", "-q", "--verify", "MERGE_HEAD")).ok:
            await git(where, "merge", "--abort")
        raise GitFailed(
            f"git refused to merge into {base} in {where}: {done.first_error()}; commit or "
            "stash your own changes there, then merge again"
        )
    commit = (await git_ok(where, "rev-parse", "HEAD")).strip()
    return MergeOutcome(
        merged=True, commit=commit, message=f"merged {branch} into {base} ({commit[:8]})"
    )


async def _commit_pending(record: WorktreeRecord) -> None:
    """Commit what the session left in its worktree, so the branch holds all of it."""
    where = Path(record.path)
    if not (await git_ok(where, "status", "--porcelain", "--untracked-files=all")).strip():
        return
    await git_ok(where, "add", "--all")
    said = f"harness session {record.session or record.name}: work in {record.name}"
    done = await git(where, "commit", "--quiet", "--no-verify", "-m", said)
    if not done.ok:
        raise GitFailed(
            f"git could not commit the worktree's changes: {done.first_error()}; "
            "set your identity (git config --global user.name/user.email) and merge again"
        )


async def _checked_out_at(repo: Path, branch: str) -> Path | None:
    """The worktree (the main one, usually) that has `branch` checked out."""
    listing = await git_ok(repo, "worktree", "list", "--porcelain")
    path: str | None = None
    for line in listing.splitlines():
        if line.startswith("worktree "):
            path = line.removeprefix("worktree ")
        elif line == f"branch refs/heads/{branch}" and path is not None:
            return Path(path)
    return None


async def _commit_unchecked(
    repo: Path, record: WorktreeRecord, tree: str, message: str
) -> MergeOutcome:
    """The merge commit of a base branch checked out nowhere: no tree to touch."""
    old = (await git_ok(repo, "rev-parse", f"refs/heads/{record.base}")).strip()
    tip = (await git_ok(repo, "rev-parse", f"refs/heads/{record.branch}")).strip()
    commit = (await git_ok(repo, "commit-tree", tree, "-p", old, "-p", tip, "-m", message)).strip()
    await git_ok(repo, "update-ref", "-m", message, f"refs/heads/{record.base}", commit, old)
    return MergeOutcome(
        merged=True,
        commit=commit,
        message=f"merged {record.branch} into {record.base} ({commit[:8]}); {record.base} is "
        "checked out nowhere, so no files changed on disk",
    )
