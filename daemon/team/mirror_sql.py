"""Writing a batch of the mirror's operations to the hub, in one transaction.

Every statement may be replayed: a batch whose commit was not acknowledged is
written again, and the catch-up copies rows the queue may copy too. So events
are `INSERT ... ON CONFLICT (session_id, seq) DO NOTHING`, sessions, turns and
approvals are upserts, usage rows carry an id fixed when queued (`usage_id`,
the same when the catch-up reads the row from the store), and a session's
`last_seq` only grows. The same transaction notifies `hub_events` with
"SESSION:LASTSEQ" for each session whose events it wrote (delivered at commit).

An approval's `answered_by` is the `answered_by` of its `approval.resolved`
event when the event says it, else the label of the client that answered.
Text columns may not hold a NUL character in PostgreSQL: it becomes U+FFFD.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import psycopg

from coding_harness.daemon.sessions.titles import title_of
from coding_harness.daemon.team.listener import EVENTS as EVENTS_CHANNEL
from coding_harness.daemon.team.mirror_queue import EVENTS, Op

Conn = psycopg.AsyncConnection[tuple[Any, ...]]


@dataclass(frozen=True, slots=True)
class Who:
    """The runner the rows are written for."""

    runner: str
    person: str
    host: str


def text(value: object) -> str:
    """A text column's value: PostgreSQL refuses NUL characters."""
    return str(value).replace("\x00", "\ufffd")


def usage_id(session: str, row: tuple[Any, ...], index: int) -> str:
    """A usage row's id: its session, turn, time and place among the rows written with it."""
    return f"{session}/{row[1]}/{row[9]!r}/{index}"


_NEW_SESSION = (
    "INSERT INTO sessions (id, runner, person, host, cwd, title, provider, model, created_at,"
    " last_activity, closed) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
    " ON CONFLICT (id) DO UPDATE SET runner = excluded.runner, person = excluded.person,"
    " title = CASE WHEN sessions.title = '' THEN excluded.title ELSE sessions.title END,"
    " host = excluded.host, cwd = excluded.cwd, provider = excluded.provider,"
    " model = excluded.model, closed = sessions.closed OR excluded.closed,"
    " last_activity = GREATEST(sessions.last_activity, excluded.last_activity)"
)
_LIVE = (
    "INSERT INTO sessions (id, runner, person, host, cwd, title, state, provider, model,"
    " created_at, last_activity, cost_usd) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s,"
    " %s, %s) ON CONFLICT (id) DO UPDATE SET title = excluded.title, state = excluded.state,"
    " provider = excluded.provider, model = excluded.model, cost_usd = excluded.cost_usd,"
    " last_activity = GREATEST(sessions.last_activity, excluded.last_activity)"
)
# A session's title is its first task: known here before the live state says it.
_FIRST_TITLE = "UPDATE sessions SET title = %s WHERE id = %s AND title = ''"
# A queued task's session may reach the hub after the runner noted it on the task.
_TASK_OF = (
    "UPDATE sessions SET task = tasks.id FROM tasks"
    " WHERE tasks.session_id = sessions.id AND sessions.id = %s AND sessions.task IS NULL"
)
_UPDATE_SESSION = "UPDATE sessions SET provider = %s, model = %s, closed = %s WHERE id = %s"
_TURN = (
    "INSERT INTO turns (id, session_id, text, state, exit_code, started_at, finished_at)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (session_id, id) DO UPDATE SET"
    " text = excluded.text, state = excluded.state, exit_code = excluded.exit_code,"
    " started_at = excluded.started_at, finished_at = excluded.finished_at"
)
_TURN_FINISHED = (
    "UPDATE turns SET state = %s, exit_code = %s, finished_at = %s"
    " WHERE session_id = %s AND id = %s"
)
_APPROVAL = (
    "INSERT INTO approvals (id, session_id, kind, path, requested_at, decision, reason, client,"
    " answered_by, resolved_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
    " ON CONFLICT (session_id, id) DO UPDATE SET kind = excluded.kind, path = excluded.path,"
    " requested_at = excluded.requested_at, decision = excluded.decision,"
    " reason = excluded.reason, client = excluded.client, resolved_at = excluded.resolved_at,"
    " answered_by = COALESCE(approvals.answered_by, excluded.answered_by)"
)
_APPROVAL_RESOLVED = (
    "UPDATE approvals SET decision = %s, reason = %s, client = %s, resolved_at = %s,"
    " answered_by = COALESCE(answered_by, %s) WHERE session_id = %s AND id = %s"
)
_ANSWERED_BY = "UPDATE approvals SET answered_by = %s WHERE session_id = %s AND id = %s"
_USAGE = (
    "INSERT INTO usage (id, session_id, turn, provider, model, prompt_tokens, cached_tokens,"
    " completion_tokens, cost_usd, day, at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
    " ON CONFLICT (id) DO NOTHING"
)
_EVENTS = (
    "INSERT INTO events (session_id, seq, kind, data, at)"
    " SELECT * FROM unnest(%s::text[], %s::bigint[], %s::text[], %s::text[], %s::float8[])"
    " ON CONFLICT (session_id, seq) DO NOTHING"
)
_LAST_SEQ = (
    "UPDATE sessions SET last_seq = GREATEST(last_seq, %s),"
    " last_activity = GREATEST(last_activity, %s) WHERE id = %s"
)


async def write_batch(conn: Conn, ops: list[Op], who: Who) -> None:
    """Write `ops` in their order, in one transaction, and notify their sessions' events."""
    events: list[tuple[Any, ...]] = []
    async with conn.transaction(), conn.cursor() as cur:
        for op in ops:
            if op.what == EVENTS:
                events.extend(op.values["rows"])
            else:
                await _write_one(cur, op, who)
        if events:
            await _write_events(cur, events)


async def _write_events(cur: psycopg.AsyncCursor[tuple[Any, ...]], rows: list[Any]) -> None:
    columns = list(zip(*rows, strict=True))
    await cur.execute(
        _EVENTS,
        (list(columns[0]), list(columns[1]), list(columns[2]), list(columns[3]), list(columns[4])),
    )
    heads: dict[str, tuple[int, float]] = {}
    for sid, seq, kind, data, at in rows:
        seq_at = heads.get(sid, (0, 0.0))
        heads[sid] = (max(seq_at[0], seq), max(seq_at[1], at))
        if kind == "approval.resolved":
            await _answered_by(cur, sid, data)
    for sid, (last_seq, at) in heads.items():
        await cur.execute(_LAST_SEQ, (last_seq, at, sid))
        await cur.execute("SELECT pg_notify(%s, %s)", (EVENTS_CHANNEL, f"{sid}:{last_seq}"))


async def _answered_by(cur: psycopg.AsyncCursor[tuple[Any, ...]], sid: str, data: str) -> None:
    try:
        resolved = json.loads(data)
    except ValueError:
        return
    who, request = resolved.get("answered_by"), resolved.get("request")
    if isinstance(who, str) and who and isinstance(request, str):
        await cur.execute(_ANSWERED_BY, (text(who), sid, request))


async def _write_one(cur: psycopg.AsyncCursor[tuple[Any, ...]], op: Op, who: Who) -> None:
    v, sid = op.values, op.session
    if op.what in ("create_session", "stored_session"):
        at = v["at"]
        await cur.execute(
            _NEW_SESSION,
            (
                sid,
                who.runner,
                who.person,
                who.host,
                text(v["cwd"]),
                text(v.get("title", "")),
                v["provider"],
                v["model"],
                at,
                v.get("last_activity", at),
                bool(v.get("closed", False)),
            ),
        )
        await cur.execute(_TASK_OF, (sid,))
    elif op.what == "live":
        await cur.execute(
            _LIVE,
            (
                sid,
                who.runner,
                who.person,
                who.host,
                text(v["cwd"]),
                text(v["title"]),
                v["state"],
                v["provider"],
                v["model"],
                v["created_at"],
                v["last_activity"],
                v["cost_usd"],
            ),
        )
    elif op.what == "update_session":
        await cur.execute(_UPDATE_SESSION, (v["provider"], v["model"], bool(v["closed"]), sid))
    elif op.what == "turn_started":
        row = (v["turn"], sid, text(v["text"]), "running", None, v["at"], None)
        await cur.execute(_TURN, row)
        await cur.execute(_FIRST_TITLE, (text(title_of([], v["text"])), sid))
    elif op.what == "turn_row":
        row = (v["turn"], sid, text(v["text"]), v["state"], v["exit_code"], v["at"], v["end"])
        await cur.execute(_TURN, row)
    elif op.what == "turn_finished":
        await cur.execute(_TURN_FINISHED, (v["state"], v["exit_code"], v["at"], sid, v["turn"]))
    elif op.what == "approval_requested":
        asked = (v["id"], sid, v["kind"], text(v["path"]), v["at"], None, None, None, None, None)
        await cur.execute(_APPROVAL, asked)
    elif op.what == "approval_row":
        await cur.execute(_APPROVAL, (v["id"], sid, *[_clean(x) for x in v["row"]]))
    elif op.what == "approval_resolved":
        client = text(v["client"])
        await cur.execute(
            _APPROVAL_RESOLVED,
            (v["decision"], text(v["reason"]), client, v["at"], client, sid, v["id"]),
        )
    elif op.what == "usage":
        await cur.executemany(
            _USAGE,
            [
                (usage_id(sid, row, index), sid, *[_clean(x) for x in row[1:]])
                for index, row in enumerate(v["rows"])
            ],
        )


def _clean(value: object) -> object:
    return text(value) if isinstance(value, str) else value
