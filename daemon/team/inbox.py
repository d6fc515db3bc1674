"""The runner's inbox: what people on other machines send this daemon's sessions.

A row of `inbox` names this runner, a session, a kind (`submit`, `approval`,
`cancel`), a body and who sent it (`inbox_send.py` writes it). This part reads
the undone rows at start, on each `hub_inbox` notification naming this runner,
after every reconnection of the listener (None), and every SLOW_SECONDS
besides. Each row is claimed in one statement (`UPDATE ... WHERE done_at IS
NULL ... FOR UPDATE SKIP LOCKED RETURNING`), which the sender's withdrawal
cannot race, and only then applied, so a row is applied at most once even if
this daemon dies right after: never twice. Its outcome (the local method's
result, or its error) is written next, with `pg_notify('hub_inbox_done', ID)`;
an outcome the hub could not take is written again at the next look.

A row waiting longer than EXPIRE_SECONDS (its sender has long stopped waiting)
is not applied: its outcome says it expired. How each kind is applied, and who
may answer approvals, is `inbox_apply.py`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

from coding_harness.daemon.team.connect import HubUnreachable
from coding_harness.daemon.team.inbox_apply import InboxDeps, Sent, apply
from coding_harness.daemon.team.listener import INBOX, INBOX_DONE
from coding_harness.daemon.team.runner import HubRunner

log = logging.getLogger(__name__)

SLOW_SECONDS = 5.0
EXPIRE_SECONDS = 60.0

_CLAIM = (
    "UPDATE inbox SET done_at = extract(epoch from now()) WHERE id = ("
    " SELECT id FROM inbox WHERE runner = %s AND done_at IS NULL ORDER BY id LIMIT 1"
    " FOR UPDATE SKIP LOCKED) AND done_at IS NULL"
    " RETURNING id, session_id, kind, body, person, host,"
    " extract(epoch from now()) - created_at"
)


class Inbox:
    """A `RunnerPart`: applies the rows sent to this runner, each once."""

    def __init__(self, deps: InboxDeps) -> None:
        self.deps = deps
        self._unwritten: dict[int, dict[str, Any]] = {}

    async def run(self, runner: HubRunner) -> None:
        wake = asyncio.Event()
        wake.set()

        def heard(payload: str | None) -> None:
            if payload is None or payload == runner.name:
                wake.set()

        off = runner.listener.on(INBOX, heard)
        try:
            while True:
                wake.clear()
                try:
                    await self.drain(runner)
                except HubUnreachable as exc:
                    log.debug("hub: the inbox waits for the hub: %s", exc)
                except Exception:  # the part goes on: the next look tries again
                    log.exception("hub: reading the inbox failed")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), SLOW_SECONDS)
        finally:
            off()

    async def drain(self, runner: HubRunner) -> int:
        """Apply every row waiting for this runner; returns how many were applied."""
        await self._write_unwritten(runner)
        applied = 0
        while True:
            async with runner.connection() as db:
                cursor = await db.execute(_CLAIM, (runner.name,))
                row = await cursor.fetchone()
            if row is None:
                return applied
            sent = _sent(row)
            if float(row[6] or 0.0) > EXPIRE_SECONDS:
                outcome = _error(-32000, f"expired: waited over {EXPIRE_SECONDS:g} s, not applied")
            else:
                outcome = apply(self.deps, runner, sent)
                applied += 1
            self._unwritten[sent.id] = outcome
            await self._write_unwritten(runner)

    async def _write_unwritten(self, runner: HubRunner) -> None:
        for row_id, outcome in list(self._unwritten.items()):
            async with runner.connection() as db, db.transaction():
                await db.execute(
                    "UPDATE inbox SET outcome = %s WHERE id = %s", (json.dumps(outcome), row_id)
                )
                await db.execute("SELECT pg_notify(%s, %s)", (INBOX_DONE, str(row_id)))
            del self._unwritten[row_id]


def _sent(row: tuple[Any, ...]) -> Sent:
    try:
        body = json.loads(str(row[3]))
    except ValueError:
        body = None
    return Sent(
        id=int(row[0]),
        session_id=str(row[1]),
        kind=str(row[2]),
        body=body if isinstance(body, dict) else {},
        person=str(row[4]),
        host=str(row[5]),
    )


def _error(code: int, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}
