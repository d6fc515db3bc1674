"""The daemon's git runner: a git whose helper hangs is stopped at its limit, helper and all."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import psutil
import pytest

from coding_harness.daemon.worktrees.git import GitFailed, git


def test_a_hung_helper_is_stopped_with_git_at_the_limit(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    pid_file = tmp_path / "helper.pid"
    # An alias runs a shell, as a transport helper or ssh would: it holds git's pipes.
    alias = f"alias.nap=!echo $$ > {pid_file}; exec sleep 60"

    async def run() -> str:
        with pytest.raises(GitFailed) as failed:
            # The limit is 3 s (time for the helper to start on a busy machine); 30 s is only
            # there to end the test if git is not stopped.
            await asyncio.wait_for(git(tmp_path, "-c", alias, "nap", seconds=3), 30)
        return str(failed.value)

    said = asyncio.run(run())
    assert "took over" in said and "stopped" in said
    helper = int(pid_file.read_text())  # it had started, and held git's pipes
    assert not psutil.pid_exists(helper) or psutil.Process(helper).status() == "zombie"
