"""The queue's rows: submitting, claiming, leases and fenced results, in SQL.

Every time here is the database's clock (`clock_timestamp()`, seconds since the
epoch), so runners whose clocks disagree still agree on when a lease ends.

A task is `queued`, then `running` on one runner, then `done`, `failed` or
`cancelled`. A claim takes the oldest queued task of a repository the runner
accepts, or a running one whose lease ended (its runner died or was cut off),
under `FOR UPDATE SKIP LOCKED`, so two runners never take the same row; it
sets the runner, adds one to `attempt` and starts the lease. Every later write
of the holder (a renewal, the session's id, the result) names the runner and
the attempt it claimed (fencing): a runner whose lease ended and whose task
was claimed again changes nothing, and learns from the empty answer that it
lost the task. `reap` ends what nobody should claim again: a task whose
cancel was asked while its runner was gone, and one whose runners stopped
MAX_ATTEMPTS times.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg

Conn = psycopg.AsyncConnection[tuple[Any, ...]]

# A task whose runner stopped holding it this many times is failed, not claimed again.
MAX_ATTEMPTS = 3
STATES = ("queued", "running", "done", "failed", "cancelled")
FINISHED = ("done", "failed", "cancelled")
_NOW = "extract(epoch from clock_timestamp())"


@dataclass(frozen=True, kw_only=True, slots=True)
class Claim:
    """A task as its runner holds it: the fence is (id, runner, attempt)."""

    id: int
    text: str
    repo: str
    ref: str
    person: str
    runner: str
    attempt: int


@dataclass(kw_only=True, slots=True)
class Outcome:
    """What a task left: its state and the result columns."""

    state: str
    session_id: str | None = None
    branch: str | None = None
    pushed: bool | None = None
    patch: str | None = None
    exit_code: int | None = None
    error: str | None = None


def _clean(text: str | None) -> str | None:
    """PostgreSQL's text refuses NUL characters."""
    return None if text is None else text.replace("\x00", "\\0")


async def submit(conn: Conn, *, text: str, repo: str, ref: str, person: str, host: str) -> int:
    """Queue a task and wake the runners; its id."""
    cursor = await conn.execute(
        "WITH t AS (INSERT INTO tasks (text, repo, ref, person, host, created_at)"
        f" VALUES (%s, %s, %s, %s, %s, {_NOW}) RETURNING id)"
        " SELECT id, pg_notify('hub_tasks', id::text) FROM t",
        (_clean(text), _clean(repo), _clean(ref), _clean(person), _clean(host)),
    )
    row = await cursor.fetchone()
    assert row is not None
    return int(row[0])


async def claim(
    conn: Conn, *, runner: str, repos: tuple[str, ...] | None, lease_seconds: float
) -> Claim | None:
    """Take one task for `runner` (of `repos`; None: any repository), or None."""
    accepts = "" if repos is None else " AND repo = ANY(%(repos)s)"
    cursor = await conn.execute(
        "UPDATE tasks SET state = 'running', runner = %(runner)s, attempt = attempt + 1,"
        f" lease_until = {_NOW} + %(lease)s"
        " WHERE id = (SELECT id FROM tasks WHERE NOT cancel_requested AND (state = 'queued'"
        f" OR (state = 'running' AND lease_until < {_NOW} AND attempt < %(most)s)){accepts}"
        " ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1)"
        " RETURNING id, text, repo, ref, person, attempt",
        {
            "runner": runner,
            "lease": lease_seconds,
            "repos": list(repos or ()),
            "most": MAX_ATTEMPTS,
        },
    )
    row = await cursor.fetchone()
    if row is None:
        return None
    return Claim(
        id=int(row[0]),
        text=str(row[1]),
        repo=str(row[2]),
        ref=str(row[3]),
        person=str(row[4]),
        runner=runner,
        attempt=int(row[5]),
    )


async def reap(conn: Conn) -> int:
    """End the running tasks whose lease ended that nobody may claim again; how many."""
    cursor = await conn.execute(
        "UPDATE tasks SET lease_until = NULL, finished_at = " + _NOW + ","
        " state = CASE WHEN cancel_requested THEN 'cancelled' ELSE 'failed' END,"
        " error = CASE WHEN cancel_requested THEN 'cancelled while its runner was away'"
        " ELSE 'its runner stopped ' || attempt || ' times before it finished' END"
        f" WHERE state = 'running' AND lease_until < {_NOW}"
        " AND (cancel_requested OR attempt >= %s) RETURNING id",
        (MAX_ATTEMPTS,),
    )
    return len(await cursor.fetchall())


_FENCE = "id = %(id)s AND runner = %(runner)s AND attempt = %(attempt)s AND state = 'running'"


def _fence(held: Claim) -> dict[str, Any]:
    return {"id": held.id, "runner": held.runner, "attempt": held.attempt}


async def renew(conn: Conn, held: Claim, lease_seconds: float) -> bool | None:
    """Extend the lease; None when it is no longer ours, else whether a cancel was asked."""
    cursor = await conn.execute(
        f"UPDATE tasks SET lease_until = {_NOW} + %(lease)s WHERE {_FENCE}"
        " RETURNING cancel_requested",
        {**_fence(held), "lease": lease_seconds},
    )
    row = await cursor.fetchone()
    return None if row is None else bool(row[0])


async def note_session(conn: Conn, held: Claim, session_id: str) -> bool:
    """Record the task's session (and the task on the session's mirrored row, if any)."""
    cursor = await conn.execute(
        f"UPDATE tasks SET session_id = %(session)s WHERE {_FENCE} RETURNING id",
        {**_fence(held), "session": session_id},
    )
    if await cursor.fetchone() is None:
        return False
    await conn.execute("UPDATE sessions SET task = %s WHERE id = %s", (held.id, session_id))
    return True


async def finish(conn: Conn, held: Claim, outcome: Outcome) -> bool:
    """Write the result, if the task is still ours; whether it was."""
    cursor = await conn.execute(
        "UPDATE tasks SET state = %(state)s, session_id = coalesce(%(session)s, session_id),"
        " branch = %(branch)s, pushed = %(pushed)s, patch = %(patch)s,"
        f" exit_code = %(code)s, error = %(error)s, finished_at = {_NOW}, lease_until = NULL"
        f" WHERE {_FENCE} RETURNING id",
        {
            **_fence(held),
            "state": outcome.state,
            "session": outcome.session_id,
            "branch": _clean(outcome.branch),
            "pushed": outcome.pushed,
            "patch": _clean(outcome.patch),
            "code": outcome.exit_code,
            "error": _clean(outcome.error),
        },
    )
    done = await cursor.fetchone() is not None
    if done and outcome.session_id:
        await conn.execute(
            "UPDATE sessions SET task = %s WHERE id = %s", (held.id, outcome.session_id)
        )
    return done


async def release(conn: Conn, held: Claim) -> bool:
    """Give a task back to the queue (its runner stops), if it is still ours."""
    cursor = await conn.execute(
        "UPDATE tasks SET state = 'queued', runner = NULL, lease_until = NULL"
        f" WHERE {_FENCE} RETURNING id, pg_notify('hub_tasks', id::text)",
        _fence(held),
    )
    return await cursor.fetchone() is not None


async def cancel(conn: Conn, task: int, by: str) -> tuple[str, bool] | None:
    """Cancel a task: a queued one at once (`cancelled`), a running one by asking its
    runner (`running`, and `hub_task_cancel` is sent); a finished one is left as it
    is. The task's state after and whether this call changed it, or None when there
    is no such task."""
    cursor = await conn.execute(
        "UPDATE tasks SET state = CASE WHEN state = 'queued' THEN 'cancelled' ELSE state END,"
        " cancel_requested = TRUE,"
        f" finished_at = CASE WHEN state = 'queued' THEN {_NOW} ELSE finished_at END,"
        " error = CASE WHEN state = 'queued' THEN %(said)s ELSE error END"
        " WHERE id = %(id)s AND state IN ('queued', 'running') RETURNING state",
        {"id": task, "said": _clean(f"cancelled by {by}")},
    )
    row = await cursor.fetchone()
    if row is not None:
        if row[0] == "running":
            await conn.execute("SELECT pg_notify('hub_task_cancel', %s)", (str(task),))
        return str(row[0]), True
    cursor = await conn.execute("SELECT state FROM tasks WHERE id = %s", (task,))
    found = await cursor.fetchone()
    return None if found is None else (str(found[0]), False)


_COLUMNS = (
    "id, state, person, host, repo, ref, runner, attempt, created_at, finished_at,"
    " session_id, branch, pushed, exit_code, error, cancel_requested, text"
)
_NAMES = tuple(name.strip() for name in _COLUMNS.split(","))


async def listing(conn: Conn, *, limit: int, task: int | None = None) -> dict[str, Any]:
    """The newest `limit` tasks (or the one `task` names, with its patch), and the
    database's time now, for their ages."""
    if task is None:
        cursor = await conn.execute(
            f"SELECT {_COLUMNS}, {_NOW} FROM tasks ORDER BY id DESC LIMIT %s", (limit,)
        )
    else:
        cursor = await conn.execute(
            f"SELECT {_COLUMNS}, {_NOW}, patch FROM tasks WHERE id = %s", (task,)
        )
    rows = await cursor.fetchall()
    tasks = [dict(zip((*_NAMES, "now", "patch"), row, strict=False)) for row in rows]
    now = float(tasks[0].pop("now")) if tasks else None
    for row in tasks:
        row.pop("now", None)
    return {"tasks": tasks, "now": now}
