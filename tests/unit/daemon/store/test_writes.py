"""A real SQLite store whose writes the "disk" refuses, text it cannot hold, a damaged file.

SQLite's own `max_page_count` limit stands in for a full disk here: a write
that needs a new page fails with SQLITE_FULL, exactly as on a full file
system (the integration tests fill a real tmpfs). Raising the limit again is
freeing space.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from coding_harness.daemon.store.db import Store
from coding_harness.daemon.store.usage_rows import UsageRow

MESSAGE = {"role": "user", "content": "x" * 20_000}


def set_room(store: Store, pages: int | None) -> None:
    """Let the database grow to `pages` pages (None: its current size, so nothing fits)."""
    db: sqlite3.Connection = store._db
    limit = pages if pages is not None else db.execute("PRAGMA page_count").fetchone()[0]
    db.execute(f"PRAGMA max_page_count = {limit}")


def stored(store: Store, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(store.path) as db:
        return db.execute(sql).fetchall()


@pytest.fixture
def store(tmp_path: Path) -> Store:
    opened = Store(tmp_path / "state" / "sessions.db")
    opened.create_session(id="s1", cwd="/w", provider=None, model=None, created_at=0.0)
    return opened


def test_a_refused_write_leaves_no_row_and_is_made_once_there_is_room(store: Store) -> None:
    told: list[tuple[str, str | None]] = []
    store.listen(lambda sid, problem: told.append((sid, problem)) or True)
    store.record_step("s1", first_index=0, messages=[MESSAGE], events=[])
    set_room(store, None)

    usage = [UsageRow(turn="t", provider="p", model="m", prompt_tokens=5, cached_tokens=0,
                      completion_tokens=1, cost_usd=None)]  # fmt: skip
    events = [(1, "turn.started", {"turn": "t", "text": "y" * 20_000}, 1.0)]
    assert not store.record_step(
        "s1", first_index=1, messages=[MESSAGE, MESSAGE], events=events, usage=usage
    )
    store.turn_started("s1", "t", "hello")  # refused too; must not raise
    assert store.problem is not None and "disk full" in store.problem
    assert told == [("s1", store.problem)]  # told once, not at every refused write
    # Rolled back whole: nothing of the step is visible.
    assert stored(store, "SELECT COUNT(*) FROM messages") == [(1,)]
    assert stored(store, "SELECT COUNT(*) FROM events") == [(0,)]
    assert stored(store, "SELECT COUNT(*) FROM usage") == [(0,)]
    assert stored(store, "SELECT COUNT(*) FROM turns") == [(0,)]

    set_room(store, 10_000)
    store.record_events("s1", [(2, "notice", {"message": "m"}, 2.0)])  # kept: in the pause
    assert store.retry()
    assert store.problem is None
    assert told[-1] == ("s1", None)
    assert stored(store, "SELECT COUNT(*) FROM messages") == [(3,)]
    assert stored(store, "SELECT seq FROM events ORDER BY seq") == [(1,), (2,)]
    assert stored(store, "SELECT prompt_tokens FROM usage") == [(5,)]
    assert stored(store, "SELECT state FROM turns") == [("running",)]


def test_a_later_history_write_replaces_a_kept_one(store: Store) -> None:
    set_room(store, None)
    for count in range(1, 4):  # three saves of a growing turn, all refused
        assert not store.record_step("s1", first_index=0, messages=[MESSAGE] * count, events=[])
    assert len(store._writer._backlog.writes()) == 1
    set_room(store, 10_000)
    store.close()  # one last try on the way out
    assert stored(store, "SELECT COUNT(*) FROM messages") == [(3,)]


def test_a_write_failing_for_its_own_reason_raises_and_is_not_kept(store: Store) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        store.create_session(id="s1", cwd="/w", provider=None, model=None, created_at=0.0)
    assert store.record_step("s1", first_index=0, messages=[MESSAGE], events=[])
    assert store.problem is None


def test_text_with_a_lone_surrogate_is_stored(store: Store) -> None:
    odd = {"role": "assistant", "content": "half \ud800 a pair"}
    assert store.record_step("s1", first_index=0, messages=[odd], events=[])
    store.turn_started("s1", "t", "text \udfff")
    (loaded,) = store.load_sessions(10)
    assert loaded.messages == [odd]
    assert stored(store, "SELECT text FROM turns") == [("text \ufffd",)]


def test_a_store_truncated_to_nothing_is_moved_aside(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    first = Store(path)
    first.create_session(id="s1", cwd="/w", provider=None, model=None, created_at=0.0)
    first.close()
    path.write_bytes(b"")
    second = Store(path)
    assert second.notice is not None
    assert "damaged" in second.notice and "truncated" in second.notice
    assert list(second.load_sessions(10)) == []
    assert len(list(tmp_path.glob("sessions.db.corrupt-*"))) == 1


def test_a_new_store_is_not_damage(tmp_path: Path) -> None:
    assert Store(tmp_path / "sessions.db").notice is None
    assert Store(tmp_path / "sessions.db").notice is None


def test_what_was_kept_is_written_once_there_is_room_with_no_further_write(
    store: Store,
) -> None:
    told: list[str | None] = []
    store.listen(lambda sid, problem: told.append(problem) or True)

    async def scenario() -> None:
        set_room(store, None)
        assert not store.record_step("s1", first_index=0, messages=[MESSAGE] * 2, events=[])
        set_room(store, 10_000)  # room again, and the daemon is idle: nobody writes
        for _ in range(500):
            if store.problem is None:
                return
            await asyncio.sleep(0.01)

    asyncio.run(scenario())
    assert store.problem is None and told[-1] is None
    assert stored(store, "SELECT COUNT(*) FROM messages") == [(2,)]


def test_a_sessions_spending_is_summed_through_an_index_not_a_table_scan(store: Store) -> None:
    """It is asked before every model call under a session limit, and usage rows stay."""
    plan = stored(
        store,
        "EXPLAIN QUERY PLAN SELECT SUM(cost_usd) FROM usage WHERE session_id = 's1'"
        " AND turn != 't1'",
    )
    assert any("usage_by_session" in str(row[-1]) for row in plan), plan
