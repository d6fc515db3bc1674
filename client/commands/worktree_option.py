"""`--worktree [NAME]` on the command line: its help, its checks, its wire value.

Kept apart from `args.py` so the flag costs that module three lines. A NAME
must be usable as a branch name (`harness/NAME`); the flag makes a new session,
so it contradicts --session, --continue and --resume.
"""

from __future__ import annotations

import re

HELP = (
    "work in a new git worktree of this repository, on branch harness/NAME (NAME"
    " left out: the session's short id); `harness worktree` lists, diffs, merges"
    " and removes them. Before the prompt words, write --worktree=NAME"
)
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")


def problem(options: dict[str, object]) -> str | None:
    """Why the flag cannot be used as the parsed `options` (their `vars`) give it, or None."""
    name = options.get("worktree")
    if not isinstance(name, str):
        return None
    for flag, key in (("--session", "session"), ("--resume", "resume")):
        if options.get(key) is not None:
            return f"--worktree makes a new session and {flag} opens one; pass one of them"
    if options.get("continued"):
        return "--worktree makes a new session and --continue opens one; pass one of them"
    if name and (not _NAME.fullmatch(name) or ".." in name or name.endswith((".lock", "."))):
        return (
            f"{name!r} is not a worktree name (letters, digits, '.', '_', '-'); give the "
            "task with -p, or write --worktree=NAME"
        )
    return None
