"""A runner that is not there, in tests: its session's rows written as its mirror would.

`put_session` writes a `sessions` row; `put_events` writes `events` rows (the
data as JSON text) and, unless told to keep quiet, `pg_notify('hub_events',
'SESSION:LASTSEQ')` after the batch, the shape the mirror writes; quiet, a
follower must find them without being told.
"""

from __future__ import annotations

import json
import time
from typing import Any

import psycopg


def put_session(url: str, session: dict[str, Any], *, runner: str, person: str) -> None:
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(
            "INSERT INTO sessions (id, runner, person, host, cwd, title, state, provider, model,"
            " created_at, last_activity, last_seq) VALUES (%s, %s, %s, %s, %s, '', 'idle',"
            " %s, %s, %s, %s, 0) ON CONFLICT (id) DO NOTHING",
            (
                session["session"],
                runner,
                person,
                "host-" + runner,
                session["cwd"],
                session.get("provider"),
                session.get("model"),
                time.time(),
                time.time(),
            ),
        )


def put_events(
    db: psycopg.Connection[Any], session_id: str, events: list[dict[str, Any]], quiet: bool = False
) -> None:
    """`events` as `event` notifications' params: {seq, kind, data, at}."""
    if not events:
        return
    with db.transaction():
        for event in events:
            db.execute(
                "INSERT INTO events (session_id, seq, kind, data, at) VALUES (%s, %s, %s, %s, %s)"
                " ON CONFLICT DO NOTHING",
                (session_id, event["seq"], event["kind"], json.dumps(event["data"]), event["at"]),
            )
        last = events[-1]["seq"]
        db.execute("UPDATE sessions SET last_seq = %s WHERE id = %s", (last, session_id))
        if not quiet:
            db.execute("SELECT pg_notify('hub_events', %s)", (f"{session_id}:{last}",))
