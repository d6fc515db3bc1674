"""Looking at a worktree: is its folder there, what changed in it, what its branch
holds that the branch it came from does not, and the diff of all of that.

A folder deleted by hand is `missing`: what was committed on its branch is still
there (shown, mergeable); what was not committed went with the folder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from coding_harness.daemon.worktrees.git import git, git_ok
from coding_harness.daemon.worktrees.records import WorktreeRecord

DIFF_LIMIT = 4 * 1024 * 1024  # characters of diff one answer carries
NEW_FILES_SHOWN = 200
_NO_TOOLS = ("--no-ext-diff", "--no-textconv", "--no-color")


@dataclass(kw_only=True, slots=True)
class Look:
    record: WorktreeRecord
    present: bool
    changed: list[str] = field(default_factory=list)  # not committed
    ahead: int | None = None  # commits on the branch not in the base; None: cannot say
    branch_exists: bool = True
    base_exists: bool = True

    @property
    def state(self) -> str:
        if not self.present:
            return "missing"
        return "changed" if self.changed or self.ahead else "clean"

    def unmerged(self) -> str | None:
        """What removing the worktree would lose, in words; None for nothing."""
        parts = []
        if self.changed:
            count = len(self.changed)
            parts.append(f"{count} changed file{'' if count == 1 else 's'}")
        if self.ahead:
            parts.append(f"{self.ahead} commit{'' if self.ahead == 1 else 's'}")
        if not self.base_exists and self.branch_exists:
            parts.append(f"a branch whose base {self.record.base} is gone")
        if not parts:
            return None
        return f"{' and '.join(parts)} not merged into {self.record.base}"

    def wire(self) -> dict[str, object]:
        return {
            **self.record.wire(),
            "state": self.state,
            "changed": self.changed,
            "ahead": self.ahead,
            "branch_exists": self.branch_exists,
        }


def is_present(record: WorktreeRecord) -> bool:
    """The folder is there and still a worktree (git's `.git` file in it)."""
    return Path(record.path, ".git").is_file()


async def _has_ref(repo: Path, branch: str) -> bool:
    return (await git(repo, "show-ref", "--verify", "--quiet", f"refs/heads/{branch}")).ok


async def look(record: WorktreeRecord) -> Look:
    repo = Path(record.repo)
    seen = Look(record=record, present=is_present(record))
    if seen.present:
        out = await git_ok(Path(record.path), "status", "--porcelain", "--untracked-files=all")
        seen.changed = [line[3:] for line in out.splitlines() if line.strip()]
    seen.branch_exists = await _has_ref(repo, record.branch)
    seen.base_exists = await _has_ref(repo, record.base)
    if seen.branch_exists and seen.base_exists:
        counted = await git(repo, "rev-list", "--count", f"{record.base}..{record.branch}")
        seen.ahead = int(counted.out.strip()) if counted.ok else None
    return seen


async def diff_text(record: WorktreeRecord) -> tuple[str, str | None]:
    """The worktree's changes against where its branch left the base (committed or not,
    new files too), and a note (a missing folder, a diff cut)."""
    repo = Path(record.repo)
    if not is_present(record):
        note = (
            f"the folder {record.path} is gone (deleted by hand): this is what its branch "
            f"{record.branch} holds; `harness worktree rm {record.name}` clears the record"
        )
        if not await _has_ref(repo, record.branch):
            return "", note
        start = await _start(repo, record, record.branch)
        text = await git_ok(repo, "diff", *_NO_TOOLS, start, record.branch)
        return _cut(text, note)
    where = Path(record.path)
    start = await _start(where, record, "HEAD")
    text = await git_ok(where, "diff", *_NO_TOOLS, start, "--")
    new = await git_ok(where, "ls-files", "--others", "--exclude-standard", "-z")
    names = [name for name in new.split("\0") if name]
    for name in names[:NEW_FILES_SHOWN]:
        shown = await git(where, "diff", "--no-index", *_NO_TOOLS, "--", "/dev/null", name)
        text += shown.out
    more = len(names) - NEW_FILES_SHOWN
    return _cut(text, f"{more} more new files are not shown" if more > 0 else None)


async def _start(where: Path, record: WorktreeRecord, tip: str) -> str:
    """Where the branch left its base: their merge base, else the commit it started at."""
    done = await git(where, "merge-base", record.base, tip)
    return done.out.strip() if done.ok and done.out.strip() else record.base_commit


def _cut(text: str, note: str | None) -> tuple[str, str | None]:
    if len(text) <= DIFF_LIMIT:
        return text, note
    cut = f"the diff was cut at {DIFF_LIMIT // 1048576} MiB; run git diff in the worktree"
    return text[:DIFF_LIMIT], f"{note}; {cut}" if note else cut
