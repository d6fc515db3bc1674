"""Real git repositories in a test's folder, and git run the way a user would."""

from __future__ import annotations

import subprocess
from pathlib import Path

STORY = "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\n"


def run_git(repo: Path, *args: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def make_repo(repo: Path, env: dict[str, str], files: dict[str, str] | None = None) -> Path:
    """A repository on branch main with `files` (story.txt by default) committed."""
    repo.mkdir(parents=True, exist_ok=True)
    run_git(repo, "init", "--quiet", "--initial-branch=main", env=env)
    for name, text in (files or {"story.txt": STORY}).items():
        (repo / name).write_text(text)
    run_git(repo, "add", "--all", env=env)
    run_git(repo, "commit", "--quiet", "-m", "first", env=env)
    return repo


def write_identity(home: Path) -> None:
    """The user's git identity, as ~/.gitconfig holds it."""
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Test User\n\temail = test@example.invalid\n"
        "[init]\n\tdefaultBranch = main\n"
    )
