"""The session store: SQLite (stdlib sqlite3, WAL) in the state folder, and the session rows.

`Store` opens the database and writes each session's rows: the session, its
messages, events, approvals and turns. Each write is one transaction with
what it describes: a step's messages go in with the events and usage that
came with them, so a crash at any point leaves either the whole step or none
of it. A write the disk refuses (full, say) is rolled back and kept for the
next (`backlog.py`), so the daemon keeps serving. The store's other tables
hang off it: `store.usage` (`usage_rows.py`: what the model calls used and
cost), `store.notes` (`notes.py`: the project notes) and `store.checkpoints`
(`checkpoints.py`). Reading sessions back is `stored_sessions.py`'s; opening,
and a damaged file, `open_db.py`'s; rows, `rows.py`'s.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from coding_harness.daemon.store.backlog import Listener, StoreWriter, Write
from coding_harness.daemon.store.checkpoints import CAP_BYTES, CheckpointStore
from coding_harness.daemon.store.notes import ProjectNotes, migrate_notes
from coding_harness.daemon.store.open_db import open_database
from coding_harness.daemon.store.rows import (
    StoredEvent,
    dump,
    event_rows,
    events_size,
    insert_events,
    storable,
)
from coding_harness.daemon.store.stored_sessions import (
    StoredSession,
    events_between,
    read_sessions,
    unresolved_approvals,
)
from coding_harness.daemon.store.usage_rows import INSERT_USAGE, UsageRow, UsageRows, usage_values

log = logging.getLogger(__name__)

_NEW_SESSION = (
    "INSERT INTO sessions (id, cwd, provider, model, created_at, last_activity)"
    " VALUES (?, ?, ?, ?, ?, ?)"
)
_SET_MODE = "INSERT OR REPLACE INTO session_modes (session_id, mode) VALUES (?, ?)"

# Told after each local write: (what, session id, its values). The hub's mirror is one
# (daemon/team/mirror.py); it only queues, and a failure of its own never fails the write.
Observer = Callable[[str, str, dict[str, Any]], None]


class Store:
    """The session store. Writes never raise for the disk's sake: they return (or
    swallow) False, and the listener hears which sessions' history is not saved."""

    def __init__(self, path: Path, *, checkpoint_cap: int = CAP_BYTES) -> None:
        self.path = path
        self._db, self.notice = open_database(path)
        migrate_notes(self._db)
        self._writer = StoreWriter(self._db, path.parent)
        self.checkpoints = CheckpointStore(
            self._db, path.parent / "checkpoints", cap_bytes=checkpoint_cap
        )
        self.usage = UsageRows(self._db, self._writer)
        self.notes = ProjectNotes(self._db, self._writer)
        self._observers: list[Observer] = []
        self.usage.observer = lambda sid, rows: self._tell("usage", sid, rows=rows)

    @property
    def problem(self) -> str | None:
        """Why writes fail now, or None while they work."""
        return self._writer.problem

    def listen(self, listener: Listener) -> None:
        """Have `listener` told which sessions' history is not saved, and when it is again."""
        self._writer.listener = listener

    def observe(self, observer: Observer) -> Callable[[], None]:
        """Tell `observer` what each write wrote, after it; returns the undo."""
        self._observers.append(observer)
        return lambda: self._observers.remove(observer) if observer in self._observers else None

    def reader(self) -> sqlite3.Connection:
        """The store's connection, for reads on the daemon's thread (the hub's catch-up)."""
        return self._db

    def _tell(self, what: str, session_id: str, **values: Any) -> None:
        for observer in list(self._observers):
            try:
                observer(what, session_id, values)
            except Exception:
                log.exception("the store's observer failed on %s", what)

    def retry(self) -> bool:
        """Try now to write what the disk refused before; True when nothing is left."""
        return self._writer.retry()

    def close(self) -> None:
        """Close the database, after one last try at what could not be written."""
        self._writer.stop()
        self._writer.retry()
        self._db.close()

    # -- writes ----------------------------------------------------------
    def create_session(
        self,
        *,
        id: str,
        cwd: str,
        provider: str | None,
        model: str | None,
        created_at: float,
        mode: str | None = None,
    ) -> None:
        """A new session, and its permission mode when it has one (one transaction)."""
        row = (id, storable(cwd), provider, model, created_at, created_at)
        writes = [Write(apply=lambda db: db.execute(_NEW_SESSION, row), session=id)]
        if mode is not None:
            writes.append(Write(apply=lambda db: db.execute(_SET_MODE, (id, mode)), session=id))
        self._writer.write(*writes)
        self._tell("create_session", id, cwd=row[1], provider=provider, model=model, at=created_at)

    def set_mode(self, session_id: str, mode: str) -> None:
        """Keep the session's permission mode across restarts."""
        self._execute(session_id, _SET_MODE, (session_id, mode))

    def update_session(
        self, session_id: str, *, provider: str | None, model: str | None, closed: bool = False
    ) -> None:
        self._execute(
            session_id,
            "UPDATE sessions SET provider = ?, model = ?, closed = ? WHERE id = ?",
            (provider, model, int(closed), session_id),
        )
        self._tell("update_session", session_id, provider=provider, model=model, closed=closed)

    def record_step(
        self,
        session_id: str,
        *,
        first_index: int,
        messages: list[dict[str, Any]],
        events: list[StoredEvent],
        usage: list[UsageRow] | None = None,
    ) -> bool:
        """Replace messages from `first_index` on and add events and usage, atomically.

        False when the disk refused it (it is kept and replayed with the next write)."""
        now = time.time()
        rows = [(session_id, first_index + i, dump(m)) for i, m in enumerate(messages)]
        extra_events = event_rows(session_id, events)
        usage_rows = [usage_values(session_id, row, now) for row in usage or []]

        def apply(db: sqlite3.Connection) -> None:
            db.execute(
                "DELETE FROM messages WHERE session_id = ? AND idx >= ?", (session_id, first_index)
            )
            db.executemany("INSERT INTO messages (session_id, idx, body) VALUES (?, ?, ?)", rows)
            db.execute("UPDATE sessions SET last_activity = ? WHERE id = ?", (now, session_id))

        def apply_extras(db: sqlite3.Connection) -> None:
            insert_events(db, extra_events)
            db.executemany(INSERT_USAGE, usage_rows)

        # Kept apart, so a later history write that replaces this one keeps them.
        extras = Write(apply=apply_extras, session=session_id, size=events_size(extra_events))
        step = Write(
            apply=apply,
            session=session_id,
            size=sum(len(r[2]) for r in rows),
            messages_from=first_index,
        )
        done = self._writer.write(*([extras] if extra_events or usage_rows else []), step)
        if extra_events:
            self._tell("events", session_id, rows=extra_events)
        if usage_rows:
            self._tell("usage", session_id, rows=usage_rows)
        return done

    def record_events(self, session_id: str, events: list[StoredEvent]) -> bool:
        rows = event_rows(session_id, events)
        done = self._writer.write(
            Write(
                apply=lambda db: insert_events(db, rows),
                session=session_id,
                size=events_size(rows),
                droppable=True,
            )
        )
        if rows:
            self._tell("events", session_id, rows=rows)
        return done

    def turn_started(self, session_id: str, turn: str, text: str) -> None:
        now = time.time()
        self._execute(
            session_id,
            "INSERT OR REPLACE INTO turns (id, session_id, text, state, started_at)"
            " VALUES (?, ?, ?, 'running', ?)",
            (turn, session_id, storable(text), now),
        )
        self._tell("turn_started", session_id, turn=turn, text=storable(text), at=now)

    def turn_finished(
        self, session_id: str, turn: str, exit_code: int, state: str = "finished"
    ) -> None:
        now = time.time()
        self._execute(
            session_id,
            "UPDATE turns SET state = ?, exit_code = ?, finished_at = ?"
            " WHERE session_id = ? AND id = ?",
            (state, exit_code, now, session_id, turn),
        )
        self._tell("turn_finished", session_id, turn=turn, state=state, exit_code=exit_code, at=now)

    def approval_requested(self, session_id: str, request: str, kind: str, path: str) -> None:
        now = time.time()
        self._execute(
            session_id,
            "INSERT OR REPLACE INTO approvals (id, session_id, kind, path, requested_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (request, session_id, kind, storable(path), now),
        )
        self._tell("approval_requested", session_id, id=request, kind=kind, path=path, at=now)

    def approval_resolved(
        self, session_id: str, request: str, decision: str, reason: str, client: str
    ) -> None:
        now = time.time()
        self._execute(
            session_id,
            "UPDATE approvals SET decision = ?, reason = ?, client = ?, resolved_at = ?"
            " WHERE session_id = ? AND id = ?",
            (decision, storable(reason), storable(client), now, session_id, request),
        )
        self._tell(
            "approval_resolved",
            session_id,
            id=request,
            decision=decision,
            reason=storable(reason),
            client=storable(client),
            at=now,
        )

    def delete_sessions_before(self, cutoff: float) -> int:
        rows = self._db.execute("SELECT id FROM sessions WHERE last_activity < ?", (cutoff,))
        return self.delete_sessions([r[0] for r in rows])

    def closed_sessions_before(self, cutoff: float) -> list[str]:
        """The sessions closed (`session.close`) and idle since before `cutoff`."""
        rows = self._db.execute(
            "SELECT id FROM sessions WHERE closed = 1 AND last_activity < ?", (cutoff,)
        )
        return [r[0] for r in rows]

    def delete_sessions(self, session_ids: list[str]) -> int:
        """Remove the sessions and every row of theirs (checkpoints included); how many."""
        ids = [(i,) for i in session_ids]

        def apply(db: sqlite3.Connection) -> None:
            for table in ("messages", "events", "turns", "approvals", "seq_marks", "session_modes"):
                db.executemany(f"DELETE FROM {table} WHERE session_id = ?", ids)
            db.executemany("DELETE FROM sessions WHERE id = ?", ids)

        if not ids or not self._writer.write(Write(apply=apply)):
            return 0
        self.checkpoints.forget_sessions(list(session_ids))
        return len(ids)

    def reserve_seq(self, session_id: str, upto: int) -> None:
        """Record that the session may number events up to `upto` before this is
        written again; a restart numbers past it, so no `seq` is ever used twice."""
        self._execute(
            session_id,
            "INSERT OR REPLACE INTO seq_marks (session_id, reserved) VALUES (?, ?)",
            (session_id, upto),
        )

    def _execute(self, session_id: str, sql: str, row: tuple[Any, ...]) -> None:
        self._writer.write(Write(apply=lambda db: db.execute(sql, row), session=session_id))

    # -- reads (stored_sessions.py) ---------------------------------------
    def load_sessions(self, event_limit: int) -> Iterator[StoredSession]:
        return read_sessions(self._db, self.usage, event_limit)

    def unresolved_approvals(self, session_id: str) -> list[str]:
        return unresolved_approvals(self._db, session_id)

    def events_between(
        self, sid: str, after_seq: int, before_seq: int, limit: int
    ) -> list[StoredEvent]:
        """Up to `limit` stored events numbered strictly between the two, oldest first
        (replay of what the in-memory log no longer holds)."""
        return events_between(self._db, sid, after_seq, before_seq, limit)

    def integrity(self) -> str:
        return str(self._db.execute("PRAGMA integrity_check").fetchone()[0])
