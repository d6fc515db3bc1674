"""Running git on the user's repository, from the daemon, as safely as git allows.

A repository's config and hooks are hostile input (docs/security.md): what the
agent wrote in the worktree, or a cloned project, must not get a program run by
the harness's own git commands. So every command here runs:

- as an argument list, never through a shell;
- with a clean environment: PATH, HOME and the user's git identity only (no
  GIT_DIR, GIT_WORK_TREE or GIT_INDEX_FILE a caller's environment may carry),
  C messages, no terminal prompt, no pager, no editor;
- with `-c` overrides of what could start a program: no hooks
  (`core.hooksPath=/dev/null`), no fsmonitor, no signing, no external diff or
  textconv (`--no-ext-diff --no-textconv` where a diff is made).

Filters and merge drivers stay those the user's own config names (a repository
cannot define one from its working tree). Commands run in a worker process of
asyncio with a time limit; a git that is missing, or slow past the limit, is a
`GitFailed` with one line to show.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from dataclasses import dataclass
from pathlib import Path

GIT_SECONDS = 120.0
# What could start a program that is not git itself, turned off for every command.
PROTECTIONS = (
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.fsmonitor=false",
    "-c", "commit.gpgSign=false",
    "-c", "tag.gpgSign=false",
    "-c", "core.pager=cat",
    "-c", "core.editor=true",
    "-c", "credential.helper=",
    "-c", "protocol.allow=never",
)  # fmt: skip
# The environment variables passed on: where programs are, whose config, who commits.
_KEPT = (
    "PATH",
    "HOME",
    "XDG_CONFIG_HOME",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
)


class GitFailed(Exception):
    """A git command that could not run or did not do its job; the text is one line."""


@dataclass(frozen=True, kw_only=True, slots=True)
class GitResult:
    code: int
    out: str
    err: str

    @property
    def ok(self) -> bool:
        return self.code == 0

    def first_error(self) -> str:
        """git's own first line about the failure (`fatal: ...`), or the exit code."""
        for line in (self.err or self.out).splitlines():
            if line.strip():
                return line.strip().removeprefix("fatal: ").removeprefix("error: ")
        return f"git exited with {self.code}"


def git_environment() -> dict[str, str]:
    env = {name: os.environ[name] for name in _KEPT if os.environ.get(name)}
    env.setdefault("PATH", "/usr/bin:/bin")
    env.update(
        LC_ALL="C",
        GIT_TERMINAL_PROMPT="0",
        GIT_PAGER="cat",
        GIT_EDITOR="true",
        GIT_OPTIONAL_LOCKS="0",
        GIT_NO_REPLACE_OBJECTS="1",
    )
    return env


async def git(cwd: Path, *args: str, seconds: float = GIT_SECONDS) -> GitResult:
    """`git ARGS` in `cwd`, with the protections above; its exit code and output."""
    program = shutil.which("git", path=git_environment()["PATH"])
    if program is None:
        raise GitFailed("git is not installed; install it (Debian and Ubuntu: apt-get install git)")
    try:
        process = await asyncio.create_subprocess_exec(
            program,
            *PROTECTIONS,
            *args,
            cwd=cwd,
            env=git_environment(),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        raise GitFailed(f"git could not run in {cwd} ({exc.strerror or exc})") from None
    try:
        out, err = await asyncio.wait_for(process.communicate(), seconds)
    except TimeoutError:
        _stop(process)
        await asyncio.wait_for(process.wait(), seconds)
        raise GitFailed(f"git {args[0]} took over {seconds:.0f} s in {cwd}; stopped") from None
    finally:
        _close_when_exited(process)
    return GitResult(
        code=process.returncode or 0,
        out=out.decode("utf-8", "replace"),
        err=err.decode("utf-8", "replace"),
    )


def _stop(process: asyncio.subprocess.Process) -> None:
    """Kill git and what it started (a transport helper, ssh): they hold its pipes."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def _close_when_exited(process: asyncio.subprocess.Process) -> None:
    """Close the exited process's transport now, not a loop iteration later (which a
    loop that stops at once never runs: a ResourceWarning at the next collection)."""
    transport = getattr(process, "_transport", None)
    if process.returncode is not None and transport is not None:
        transport.close()


async def git_ok(cwd: Path, *args: str) -> str:
    """`git ARGS`'s standard output; `GitFailed` with git's own line when it fails."""
    done = await git(cwd, *args)
    if not done.ok:
        raise GitFailed(f"git {args[0]} failed: {done.first_error()}")
    return done.out


_LOCKS: dict[str, asyncio.Lock] = {}


def repo_lock(repo: str) -> asyncio.Lock:
    """One lock per repository: the daemon's git commands on it run one after another
    (branches, worktrees and merges of parallel sessions meet in its .git)."""
    return _LOCKS.setdefault(repo, asyncio.Lock())
