"""`queue.submit`, `queue.list`, `queue.cancel`: the hub's shared task queue (docs/team.md).

`queue.submit {text, repo?, ref?, cwd}` queues a task in the hub as this
daemon's person and host; without `repo`, the `origin` of the repository `cwd`
is in, without `ref` its current branch (a detached HEAD: its commit). Its
answer: `{task, repo, ref, hub, accepted_by}` (the runners that accept the
repository and have slots now; an empty list means the task waits until one
joins). `queue.list {limit?, task?}`: the newest tasks (`task`: that one, with
its patch) and the hub's clock `now`. `queue.cancel {task}`: `{task, state}`,
`cancelled` for a queued task, `running` for one whose runner was asked to
stop it; a finished task is refused.

A daemon without a hub answers -32600 with `data: {hub: "none"}`; a hub that
cannot be reached, -32021 (`HubUnavailable`) with `data: {hub: "unreachable"}` (the client exits
5 and 4). The team modules, and psycopg with them, load only on a first call.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coding_harness.daemon.methods.params import text, workspace_folder
from coding_harness.daemon.methods.parts import MethodParts
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.server.rpc import Handler
from coding_harness.daemon.worktrees.git import GitFailed, git
from coding_harness.protocol import errors
from coding_harness.protocol import methods as m

if TYPE_CHECKING:
    from coding_harness.daemon.team.runner import HubRunner

NO_HUB = (
    "no hub is configured: name your team's PostgreSQL database in the `hub` key of "
    "~/.coding_harness.json (docs/team.md)"
)
LIST_LIMIT = 100
MOST_LISTED = 1000


def _hub(parts: MethodParts) -> HubRunner:
    hub = parts.hub()
    if hub is None:
        raise errors.InvalidRequest(NO_HUB, data={"hub": "none"})
    return hub


def _away(message: str) -> errors.RpcError:
    return errors.HubUnavailable(message, data={"hub": "unreachable"})


async def queue_submit(
    parts: MethodParts,
    conn: Connection,
    text: Any = None,
    cwd: Any = None,
    repo: Any = None,
    ref: Any = None,
) -> dict[str, Any]:
    task_text = _text("text", text)
    hub = _hub(parts)
    folder = workspace_folder(_text("cwd", cwd)) if cwd is not None else parts.home
    url = _text("repo", repo) if repo is not None else await _origin(folder)
    at = _text("ref", ref) if ref is not None else await _current_ref(folder)
    from coding_harness.daemon.team import task_claims
    from coding_harness.daemon.team.connect import HubUnreachable

    try:
        async with hub.connection() as db:
            task = await task_claims.submit(
                db, text=task_text, repo=url, ref=at, person=hub.person, host=hub.host
            )
            cursor = await db.execute("SELECT name, repos FROM runners WHERE slots > 0")
            runners = await cursor.fetchall()
    except HubUnreachable as exc:
        raise _away(str(exc)) from None
    return {
        "task": task,
        "repo": url,
        "ref": at,
        "hub": hub.settings.name,
        "accepted_by": sorted(str(name) for name, repos in runners if _accepts(repos, url)),
    }


def _text(name: str, value: Any) -> str:
    return text(name, value).strip() or text(name, None)


def _accepts(repos: Any, url: str) -> bool:
    try:
        listed = json.loads(str(repos))
    except ValueError:
        return False
    return isinstance(listed, list) and ("*" in listed or url in listed)


async def _origin(folder: Path) -> str:
    try:
        done = await git(folder, "remote", "get-url", "origin")
    except GitFailed as exc:
        raise errors.InvalidParams(f"{exc}; or pass --repo URL") from None
    url = done.out.strip()
    if not done.ok or not url:
        raise errors.InvalidParams(
            f"{folder} is not in a git repository with an `origin` remote: pass --repo URL "
            "(the repository the runners should clone)"
        )
    return url


async def _current_ref(folder: Path) -> str:
    branch = await git(folder, "symbolic-ref", "--quiet", "--short", "HEAD")
    if branch.ok and branch.out.strip():
        return branch.out.strip()
    commit = await git(folder, "rev-parse", "--verify", "--quiet", "HEAD")
    if commit.ok and commit.out.strip():
        return commit.out.strip()
    raise errors.InvalidParams(f"{folder} has no commit to start from: pass --ref REF")


async def queue_list(
    parts: MethodParts, conn: Connection, limit: Any = None, task: Any = None
) -> dict[str, Any]:
    hub = _hub(parts)
    most = _whole("limit", LIST_LIMIT if limit is None else limit)
    wanted = None if task is None else _whole("task", task)
    from coding_harness.daemon.team import task_claims
    from coding_harness.daemon.team.connect import HubUnreachable

    try:
        async with hub.connection() as db:
            listed = await task_claims.listing(db, limit=min(most, MOST_LISTED), task=wanted)
    except HubUnreachable as exc:
        raise _away(str(exc)) from None
    if wanted is not None and not listed["tasks"]:
        raise errors.InvalidParams(f"no task {wanted} in hub {hub.settings.name}")
    return {**listed, "hub": hub.settings.name}


async def queue_cancel(parts: MethodParts, conn: Connection, task: Any = None) -> dict[str, Any]:
    hub = _hub(parts)
    wanted = _whole("task", task)
    from coding_harness.daemon.team import task_claims
    from coding_harness.daemon.team.connect import HubUnreachable

    try:
        async with hub.connection() as db:
            found = await task_claims.cancel(db, wanted, hub.person)
    except HubUnreachable as exc:
        raise _away(str(exc)) from None
    if found is None:
        raise errors.InvalidParams(f"no task {wanted} in hub {hub.settings.name}")
    state, changed = found
    if not changed:
        raise errors.InvalidParams(f"task {wanted} is {state} already; there is nothing to cancel")
    return {"task": wanted, "state": state}


def _whole(name: str, value: Any) -> int:
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise errors.InvalidParams(f"{name} must be a whole number of at least 1")
    return value


HANDLERS: dict[str, Handler] = {
    m.QUEUE_SUBMIT: queue_submit,
    m.QUEUE_LIST: queue_list,
    m.QUEUE_CANCEL: queue_cancel,
}
# Each waits on the hub's database: the connection goes on answering meanwhile.
DETACHED = frozenset(HANDLERS)
