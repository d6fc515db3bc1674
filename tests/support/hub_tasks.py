"""What the queue's integration tests share: a repository to clone, runners, the hub's rows.

`origin_repo` makes a bare repository with one commit on `main` (its path is
the URL tasks name); `runner_config` writes a machine's global file as a
runner of the hub with the given `hub.runner` settings and `agent` keys;
`task_rows` reads the `tasks` table; `git` runs git for the test itself.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.support.hub_machines import Machine
from tests.support.postgres import PostgresServer
from tests.support.waiting import wait_for

_IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
    "PATH": "/usr/bin:/bin",
    "HOME": "/nonexistent",
}
FINISHED = ("done", "failed", "cancelled")
COLUMNS = ("id", "state", "runner", "attempt", "session_id", "branch", "pushed", "error")


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=_IDENTITY, capture_output=True, text=True, check=True
    )
    return done.stdout


def origin_repo(root: Path, name: str = "origin") -> Path:
    """A bare repository with one commit on main: README.md saying hello."""
    work = root / f"{name}-work"
    work.mkdir(parents=True)
    git(work, "init", "--quiet", "-b", "main")
    (work / "README.md").write_text("hello\n")
    git(work, "add", "README.md")
    git(work, "commit", "--quiet", "-m", "first")
    bare = root / f"{name}.git"
    git(root, "clone", "--quiet", "--bare", str(work), str(bare))
    return bare


def runner_config(
    machine: Machine,
    endpoint: str,
    hub_url: str,
    agent: dict[str, Any] | None = None,
    **runner: Any,
) -> None:
    machine.configure(endpoint, hub_url, runner=runner)
    machine.config["agent"] = {"sandbox": "off", **(agent or {})}
    (machine.home / ".coding_harness.json").write_text(json.dumps(machine.config))


def task_rows(postgres: PostgresServer, hub_url: str) -> list[dict[str, str]]:
    out = postgres.psql(
        "SELECT " + ", ".join(f"coalesce({c}::text, '')" for c in COLUMNS) + " FROM tasks"
        " ORDER BY id",
        hub_url,
    )
    return [dict(zip(COLUMNS, line.split("|"), strict=True)) for line in out.splitlines() if line]


def wait_for_states(
    postgres: PostgresServer, hub_url: str, wanted: dict[str, str], within: float = 60
) -> list[dict[str, str]]:
    """Wait until each task id in `wanted` is in its state; the rows then."""

    rows: list[dict[str, str]] = []

    def reached() -> bool:
        rows[:] = task_rows(postgres, hub_url)
        states = {row["id"]: row["state"] for row in rows}
        for key, state in states.items():
            if key in wanted and state in FINISHED and state != wanted[key]:
                raise AssertionError(f"task {key} ended {state}, not {wanted[key]}: {rows}")
        return all(states.get(k) == v for k, v in wanted.items())

    try:
        wait_for(reached, "tasks in their states", within=within, every=0.2)
    except AssertionError as exc:
        late = [row for row in rows if row["state"] != wanted.get(row["id"], row["state"])]
        raise AssertionError(f"{exc}; not there: {late[:5]}") from None
    return rows


def joined(machine: Machine, within: float = 30) -> None:
    def is_joined() -> bool:
        conn = machine.client()
        try:
            return bool(conn.request("daemon.status", {})["hub"]["joined"])
        finally:
            conn.close()

    deadline = time.monotonic() + within
    wait_for(
        is_joined, f"{machine.name} to join the hub", within=max(1.0, deadline - time.monotonic())
    )
