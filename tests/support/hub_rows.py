"""A stand-in for the hub's mirror in tests: a session's rows written as a runner's would be.

`put_session` writes a `sessions` row; `put_events` writes `events` rows (the
data as JSON text) and, unless told to keep quiet, `pg_notify('hub_events',
'SESSION:LASTSEQ')` after the batch, the shape the mirror writes.
`EventCopier` follows a session on a machine's own daemon (a real client,
`session.attach` with `since_seq`) and writes each event it hears into the hub,
so tests of following, the inbox and approvals can run before the mirror
exists; `quiet` makes it write rows without notifying.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from pathlib import Path
from typing import Any

import psycopg

from coding_harness.protocol.client import Connection
from tests.support.processes import client


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


class EventCopier:
    """Copies a session's events from its daemon into the hub as they come."""

    def __init__(self, socket: Path, url: str, session_id: str) -> None:
        self.socket, self.url, self.session_id = socket, url, session_id
        self.quiet = False
        self.copied = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> EventCopier:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def __enter__(self) -> EventCopier:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        conn: Connection = client(self.socket, "hub-copier", approvals=False)
        with contextlib.closing(conn), psycopg.connect(self.url, autocommit=True) as db:
            conn.request("session.attach", {"session": self.session_id, "since_seq": 0})
            while not self._stop.is_set():
                batch: list[dict[str, Any]] = []
                note = conn.next_notification(timeout=0.1)
                while note is not None:
                    params = note.get("params") or {}
                    if note.get("method") == "event" and params.get("session") == self.session_id:
                        batch.append(params)
                    note = conn.next_notification(timeout=0) if conn.has_buffered() else None
                put_events(db, self.session_id, batch, quiet=self.quiet)
                self.copied += len(batch)
