"""Removing a worktree: its folder, its branch and its record.

Refused while it holds work not merged into the branch it came from (changed
files, commits), unless forced; then the answer names the commit the branch
pointed to, which `git branch NAME SHA` brings back while git keeps it. A
folder deleted by hand is cleared from git's list (`git worktree prune`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from coding_harness.daemon.worktrees.git import GitFailed, git, repo_lock
from coding_harness.daemon.worktrees.records import WorktreeBook, WorktreeRecord
from coding_harness.daemon.worktrees.status import look


class Unmerged(Exception):
    """Removing would lose work; the text says what and how to go on."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Removed:
    message: str
    dropped: str | None  # what --force threw away, in words
    branch_tip: str | None  # the commit the deleted branch pointed to


async def remove_worktree(record: WorktreeRecord, book: WorktreeBook, *, force: bool) -> Removed:
    async with repo_lock(record.repo):
        seen = await look(record)
        unmerged = seen.unmerged()
        if unmerged and not force:
            raise Unmerged(
                f"refused: worktree {record.name} has {unmerged}; merge it first "
                f"(harness worktree merge {record.name}), or pass --force to drop it"
            )
        repo = Path(record.repo)
        if seen.present:
            done = await git(repo, "worktree", "remove", "--force", record.path)
            if not done.ok:
                raise GitFailed(f"git could not remove {record.path}: {done.first_error()}")
        else:
            await git(repo, "worktree", "prune")
        tip = None
        if seen.branch_exists:
            tip = (await git(repo, "rev-parse", f"refs/heads/{record.branch}")).out.strip()
            await git(repo, "branch", "-D", record.branch)
        book.remove(record.name)
    said = f"removed worktree {record.name}"
    if tip:
        said += f" and branch {record.branch}"
    if unmerged:
        said += f"; dropped {unmerged}"
        if tip and seen.ahead:
            said += f" (git branch {record.branch} {tip[:12]} brings the commits back)"
    return Removed(message=said, dropped=unmerged, branch_tip=tip)
