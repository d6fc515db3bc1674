"""Sending to another runner's session through the hub's inbox, and waiting for its outcome.

A request on this daemon for a session another runner holds (`session.submit`,
`approval.respond`, `session.cancel`) becomes a row of `inbox`: the session's
runner, the kind, the body (JSON), and who sends it (this daemon's hub person
and host). `pg_notify('hub_inbox', RUNNER)` wakes that runner, which applies
the row once and writes its outcome (`inbox.py`), then says so on
`hub_inbox_done` with the row's id. This side waits for the outcome at most
WAIT_SECONDS (woken by that notification, and reading the row every
POLL_SECONDS besides); a row still untouched then is withdrawn, in one
statement that the runner's claim cannot race, so what was not applied never
will be later, and the client hears which.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from coding_harness.daemon.team.connect import HubUnreachable
from coding_harness.daemon.team.listener import INBOX, INBOX_DONE
from coding_harness.daemon.team.runner import HubRunner
from coding_harness.protocol import errors

WAIT_SECONDS = 15.0
POLL_SECONDS = 1.0


class NotDelivered(Exception):
    """The runner did not take the request in time; it was withdrawn, nothing ran."""


async def send(
    runner: HubRunner, *, to: str, session_id: str, kind: str, body: dict[str, Any]
) -> dict[str, Any]:
    """The outcome's result, the outcome's error raised as the RpcError it names;
    NotDelivered when nothing was applied; HubUnreachable when the hub is away."""
    done = asyncio.Event()
    row_id: int | None = None

    def heard(payload: str | None) -> None:
        if payload is None or payload == str(row_id):
            done.set()

    off = runner.listener.on(INBOX_DONE, heard)
    try:
        async with runner.connection() as db:
            cursor = await db.execute(
                "WITH sent AS (INSERT INTO inbox (runner, session_id, kind, body, person, host,"
                " created_at) VALUES (%s, %s, %s, %s, %s, %s, extract(epoch from now()))"
                " RETURNING id) SELECT id, pg_notify(%s, %s) FROM sent",
                (to, session_id, kind, _text(body), runner.person, runner.host, INBOX, to),
            )
            row = await cursor.fetchone()
        assert row is not None
        row_id = int(row[0])
        return await _outcome(runner, row_id, done)
    finally:
        off()


async def _outcome(runner: HubRunner, row_id: int, done: asyncio.Event) -> dict[str, Any]:
    deadline = asyncio.get_running_loop().time() + WAIT_SECONDS
    while True:
        done.clear()  # before the read: a notification during it wakes the wait
        outcome = await _read(runner, row_id)
        if outcome is not None:
            return _unpack(outcome)
        left = deadline - asyncio.get_running_loop().time()
        if left <= 0:
            break
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), min(POLL_SECONDS, left))
    async with runner.connection() as db:
        cursor = await db.execute(
            "UPDATE inbox SET done_at = extract(epoch from now()), outcome = %s"
            " WHERE id = %s AND done_at IS NULL RETURNING id",
            (_text({"error": {"code": -32000, "message": "withdrawn: not taken in time"}}), row_id),
        )
        withdrawn = await cursor.fetchone() is not None
    if withdrawn:
        raise NotDelivered(f"it did not take the request within {WAIT_SECONDS:g} s")
    outcome = await _read(runner, row_id)  # taken just now: its outcome may be there
    if outcome is not None:
        return _unpack(outcome)
    raise NotDelivered("it took the request but its outcome did not come back in time")


async def _read(runner: HubRunner, row_id: int) -> dict[str, Any] | None:
    """The row's outcome once written; None while it waits (or is being applied)."""
    try:
        async with runner.connection() as db:
            cursor = await db.execute("SELECT outcome FROM inbox WHERE id = %s", (row_id,))
            row = await cursor.fetchone()
    except HubUnreachable:
        return None  # the wait goes on; the deadline ends it
    if row is None or row[0] is None:
        return None
    value = json.loads(str(row[0]))
    return value if isinstance(value, dict) else {"result": value}


def _unpack(outcome: dict[str, Any]) -> dict[str, Any]:
    error = outcome.get("error")
    if isinstance(error, dict):
        raise errors.from_wire(error)
    result = outcome.get("result")
    return result if isinstance(result, dict) else {"result": result}


def _text(value: dict[str, Any]) -> str:
    return json.dumps(value)  # its escapes keep a NUL out of the text column
