"""The hub's tables, as numbered migrations applied once each.

The session tables have the SQLite store's columns (`store/open_db.py`) plus
who and where: `sessions`, `events`, `turns`, `approvals` and `usage` carry a
session's rows as its runner wrote them locally. The hub adds `runners` (each
daemon that joined, and when it was last seen), `inbox` (what a person on
another machine sends a session: a task, an approval's answer, a cancel) and
`tasks` (the shared queue). Every text the database holds is as the store
holds it; event data is the JSON text, as in SQLite (PostgreSQL's jsonb refuses
a NUL character that JSON text escapes).

`migrate` runs at every runner's start: under a transaction-wide advisory lock,
so runners starting together apply each migration once, it applies those above
the database's version in order, each in its own transaction with its version
row. A database newer than this daemon knows is used as it is (migrations only
add) and said so. A migration is never edited once released: a change is a new
one at the end.
"""

from __future__ import annotations

import logging
import time

import psycopg

log = logging.getLogger(__name__)

# An arbitrary key for pg_advisory_xact_lock: "harness" in ASCII, as a bigint.
MIGRATION_LOCK = 0x68_61_72_6E_65_73_73

MIGRATIONS: tuple[tuple[int, str], ...] = (
    (
        1,
        """
CREATE TABLE runners (
    name TEXT PRIMARY KEY, person TEXT NOT NULL, host TEXT NOT NULL,
    slots INTEGER NOT NULL DEFAULT 0, repos TEXT NOT NULL DEFAULT '[]',
    version TEXT NOT NULL, started_at DOUBLE PRECISION NOT NULL,
    seen_at DOUBLE PRECISION NOT NULL
);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, runner TEXT NOT NULL, person TEXT NOT NULL, host TEXT NOT NULL,
    cwd TEXT NOT NULL, title TEXT NOT NULL DEFAULT '', state TEXT NOT NULL DEFAULT 'idle',
    provider TEXT, model TEXT, created_at DOUBLE PRECISION NOT NULL,
    last_activity DOUBLE PRECISION NOT NULL, last_seq BIGINT NOT NULL DEFAULT 0,
    cost_usd DOUBLE PRECISION, closed BOOLEAN NOT NULL DEFAULT FALSE, task BIGINT
);
CREATE INDEX sessions_by_runner ON sessions (runner, last_activity);
CREATE TABLE events (
    session_id TEXT NOT NULL, seq BIGINT NOT NULL, kind TEXT NOT NULL, data TEXT NOT NULL,
    at DOUBLE PRECISION NOT NULL, PRIMARY KEY (session_id, seq)
);
CREATE TABLE turns (
    id TEXT NOT NULL, session_id TEXT NOT NULL, text TEXT NOT NULL, state TEXT NOT NULL,
    exit_code INTEGER, started_at DOUBLE PRECISION NOT NULL, finished_at DOUBLE PRECISION,
    PRIMARY KEY (session_id, id)
);
CREATE TABLE approvals (
    id TEXT NOT NULL, session_id TEXT NOT NULL, kind TEXT NOT NULL, path TEXT NOT NULL,
    requested_at DOUBLE PRECISION NOT NULL, decision TEXT, reason TEXT, client TEXT,
    answered_by TEXT, resolved_at DOUBLE PRECISION, PRIMARY KEY (session_id, id)
);
CREATE TABLE usage (
    id TEXT PRIMARY KEY, session_id TEXT NOT NULL, turn TEXT NOT NULL,
    provider TEXT NOT NULL, model TEXT NOT NULL, prompt_tokens INTEGER NOT NULL,
    cached_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,
    cost_usd DOUBLE PRECISION, day TEXT NOT NULL, at DOUBLE PRECISION NOT NULL
);
CREATE INDEX usage_by_session ON usage (session_id, turn);
CREATE TABLE inbox (
    id BIGSERIAL PRIMARY KEY, runner TEXT NOT NULL, session_id TEXT NOT NULL,
    kind TEXT NOT NULL, body TEXT NOT NULL, person TEXT NOT NULL, host TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL, done_at DOUBLE PRECISION, outcome TEXT
);
CREATE INDEX inbox_waiting ON inbox (runner, id) WHERE done_at IS NULL;
CREATE TABLE tasks (
    id BIGSERIAL PRIMARY KEY, text TEXT NOT NULL, repo TEXT NOT NULL, ref TEXT NOT NULL,
    person TEXT NOT NULL, host TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL,
    state TEXT NOT NULL DEFAULT 'queued', runner TEXT, attempt INTEGER NOT NULL DEFAULT 0,
    lease_until DOUBLE PRECISION, session_id TEXT, branch TEXT, pushed BOOLEAN,
    patch TEXT, exit_code INTEGER, error TEXT, finished_at DOUBLE PRECISION,
    cancel_requested BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX tasks_waiting ON tasks (state, id);
""",
    ),
)

LATEST = MIGRATIONS[-1][0]

_VERSION_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL
)
"""


async def migrate(conn: psycopg.AsyncConnection[tuple[object, ...]]) -> int:
    """Bring the hub's tables up to LATEST; returns the database's version after."""
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        await conn.execute(_VERSION_TABLE)
        cursor = await conn.execute("SELECT coalesce(max(version), 0) FROM schema_migrations")
        row = await cursor.fetchone()
        current = int(row[0]) if row else 0  # type: ignore[call-overload]
        for version, statements in MIGRATIONS:
            if version <= current:
                continue
            async with conn.transaction():
                await conn.execute(statements.encode())
                await conn.execute(
                    "INSERT INTO schema_migrations (version, applied_at) VALUES (%s, %s)",
                    (version, time.time()),
                )
            log.info("hub: applied migration %d", version)
            current = version
    if current > LATEST:
        log.info("hub: the database is at version %d, newer than this daemon's %d", current, LATEST)
    return current
