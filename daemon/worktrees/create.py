"""Making a session's worktree: the checks, `git worktree add`, the record.

Each way it cannot be made is one line naming the fix, and nothing is made:
not a git repository, a repository without a commit, a detached HEAD (no branch
to merge back into), a name that is not a usable branch name, or one taken (by
another worktree of the daemon, by a branch, by a folder). A tree with
uncommitted changes is not refused: the new branch starts from HEAD without
them, and the returned notice says so. A name left out is the session's short
id. Worktrees go in `worktrees.folder` of the global config file (a project
file cannot move them), else `worktrees/` in the state folder.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from coding_harness.daemon.worktrees.git import GitFailed, git, git_ok, repo_lock
from coding_harness.daemon.worktrees.records import WorktreeBook, WorktreeRecord
from coding_harness.protocol import paths
from coding_harness.protocol.config_files import GLOBAL_CONFIG_NAME

BRANCH_PREFIX = "harness/"
NAME_RULE = "letters, digits, '.', '_' and '-' (at most 63), starting with a letter or digit"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")


class CannotCreate(Exception):
    """Why the worktree was not made, in one line naming the fix."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Created:
    record: WorktreeRecord
    notice: str | None  # what the user should know (a dirty tree)


def name_problem(name: str) -> str | None:
    """Why `name` cannot name a worktree (and its branch), or None."""
    if not _NAME.fullmatch(name) or ".." in name or name.endswith((".lock", ".")):
        return f"the worktree name {name!r} cannot be used: use {NAME_RULE}"
    return None


def worktrees_folder(home: Path) -> Path:
    """Where worktrees go: the global file's `worktrees.folder`, else the state folder's."""
    try:
        raw = json.loads((home / GLOBAL_CONFIG_NAME).read_text(encoding="utf-8"))
        folder = raw["worktrees"]["folder"]
    except (OSError, ValueError, KeyError, TypeError):
        folder = None
    if isinstance(folder, str) and folder.strip():
        chosen = Path(folder.strip()).expanduser()
        if chosen.is_absolute():
            return chosen
    return paths.state_dir() / "worktrees"


async def create_worktree(
    cwd: Path, name: str | None, session: str, book: WorktreeBook, folder: Path
) -> Created:
    """A new worktree of the repository `cwd` is in, on branch harness/NAME."""
    top = await _top(cwd)
    repo = await _main_folder(top)
    head = await _head(top)
    base = await _branch(top, head)
    async with repo_lock(repo):
        chosen = name or session.rsplit("-", 1)[-1]
        problem = name_problem(chosen)
        if problem:
            raise CannotCreate(problem)
        chosen = await _free_name(top, chosen, book, folder, given=name is not None)
        path = folder / chosen
        dirty = await _changed_files(top)
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)  # noqa: ASYNC240 - one folder
        added = await git(top, "worktree", "add", "--quiet", "-b", BRANCH_PREFIX + chosen,
                          str(path), head)  # fmt: skip
        if not added.ok:
            raise CannotCreate(f"git could not make the worktree: {added.first_error()}")
        record = WorktreeRecord(
            name=chosen, branch=BRANCH_PREFIX + chosen, path=str(path), repo=repo,
            base=base, base_commit=head, session=session,
        )  # fmt: skip
        book.add(record)
    notice = None
    if dirty:
        notice = (
            f"{top} has uncommitted changes ({dirty} file{'' if dirty == 1 else 's'}); the "
            f"worktree's branch {record.branch} starts from HEAD ({head[:8]} on {base}) "
            "without them: commit them first if the task needs them"
        )
    return Created(record=record, notice=notice)


async def _top(cwd: Path) -> Path:
    done = await git(cwd, "rev-parse", "--show-toplevel")
    if not done.ok or not done.out.strip():
        raise CannotCreate(
            f"--worktree needs a git repository, and {cwd} is not in one; run `git init` "
            "and commit there, or leave out --worktree"
        )
    return Path(done.out.strip())


async def _main_folder(top: Path) -> str:
    """The main worktree's folder (`top` itself unless it is a linked worktree)."""
    common = (await git_ok(top, "rev-parse", "--path-format=absolute", "--git-common-dir")).strip()
    common_path = Path(common)
    return str(common_path.parent if common_path.name == ".git" else top)


async def _head(top: Path) -> str:
    done = await git(top, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    if not done.ok:
        raise CannotCreate(
            f"the repository at {top} has no commit yet, and a worktree starts from one; "
            "commit first (git add ... && git commit), or leave out --worktree"
        )
    return done.out.strip()


async def _branch(top: Path, head: str) -> str:
    done = await git(top, "symbolic-ref", "--quiet", "--short", "HEAD")
    if not done.ok:
        raise CannotCreate(
            f"HEAD is detached in {top} (at {head[:8]}), so the worktree would have no branch "
            "to merge back into; check out a branch first (git switch BRANCH), or leave out "
            "--worktree"
        )
    return done.out.strip()


async def _free_name(top: Path, name: str, book: WorktreeBook, folder: Path, *, given: bool) -> str:
    """`name`, or for a generated one another when it is taken; CannotCreate when a
    given one is taken."""
    for _ in range(5):
        taken = await _taken(top, name, book, folder)
        if taken is None:
            return name
        if given:
            raise CannotCreate(taken)
        name = f"{name}-{secrets.token_hex(2)}"
    raise CannotCreate("no free worktree name was found; give one: --worktree NAME")


async def _taken(top: Path, name: str, book: WorktreeBook, folder: Path) -> str | None:
    known = book.named(name)
    if known is not None:
        return (
            f"a worktree named {name} exists already ({known.path}); pick another name, "
            f"or remove that one: harness worktree rm {name}"
        )
    branch = BRANCH_PREFIX + name
    if (await git(top, "show-ref", "--verify", "--quiet", f"refs/heads/{branch}")).ok:
        return (
            f"the branch {branch} exists already in {top}; pick another name "
            f"(--worktree OTHER), or delete that branch: git branch -D {branch}"
        )
    if (folder / name).exists():
        return f"the folder {folder / name} exists already; remove it, or pick another name"
    return None


async def _changed_files(top: Path) -> int:
    """How many files `git status` shows changed or new (0 when it cannot say)."""
    try:
        out = await git_ok(top, "status", "--porcelain", "--untracked-files=normal")
    except GitFailed:
        return 0
    return sum(1 for line in out.splitlines() if line.strip())


async def discard(record: WorktreeRecord, book: WorktreeBook) -> None:
    """Undo a creation nothing has used yet: the folder, the branch, the record."""
    repo = Path(record.repo)
    await git(repo, "worktree", "remove", "--force", record.path)
    await git(repo, "branch", "-D", record.branch)
    book.remove(record.name)
