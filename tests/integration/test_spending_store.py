"""Spending read from a real SQLite store: what the day and session totals count, and a
turn's guard over rows written by `record_step` and rows not written yet."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from coding_harness.daemon.agent.seams import Usage
from coding_harness.daemon.config.profiles import ProviderProfile
from coding_harness.daemon.store.db import Store
from coding_harness.daemon.store.usage_rows import UsageRow, usage_day
from coding_harness.daemon.usage.cost import cost_usd
from coding_harness.daemon.usage.spending import DAY_KEY, SESSION_KEY, turn_spending

PROFILE = ProviderProfile(
    name="cloud",
    type="openai",
    endpoint="https://api.example.com/v1/chat/completions",
    model="m",
    pricing={"input": 10.0, "output": 30.0},
)
CALL = Usage(prompt_tokens=10_000, completion_tokens=1_000)  # $0.13
CALL_USD = cost_usd(CALL, PROFILE) or 0.0


def row(turn: str, cost: float | None) -> UsageRow:
    return UsageRow(
        turn=turn,
        provider="cloud",
        model="m",
        prompt_tokens=1,
        cached_tokens=0,
        completion_tokens=1,
        cost_usd=cost,
    )


@pytest.fixture
def store(tmp_path: Path) -> Store:
    opened = Store(tmp_path / "state" / "sessions.sqlite3")
    for sid in ("s1", "s2"):
        opened.create_session(id=sid, cwd="/w", provider="cloud", model="m", created_at=0.0)
    return opened


def write(store: Store, sid: str, *rows: UsageRow) -> None:
    store.record_step(sid, first_index=0, messages=[], events=[], usage=list(rows))


def file_row_on(store: Store, day: str, cost: float) -> None:
    """A row from another day, written as the daemon would have written it then."""
    with sqlite3.connect(store.path) as db:
        db.execute(
            "INSERT INTO usage VALUES ('s1', 'old', 'cloud', 'm', 1, 0, 1, ?, ?, ?)",
            (cost, day, time.time() - 86_400),
        )


def test_an_empty_store_has_spent_nothing(store: Store) -> None:
    assert store.usage.spent_today_usd() == 0.0
    assert store.usage.spent_session_usd("s1") == 0.0


def test_today_counts_every_session_and_only_today(store: Store) -> None:
    write(store, "s1", row("t1", 0.5), row("t1", 0.25))
    write(store, "s2", row("t7", 1.0))
    file_row_on(store, "2000-01-01", 99.0)
    assert store.usage.spent_today_usd() == pytest.approx(1.75)
    assert store.usage.spent_today_usd(day=usage_day()) == pytest.approx(1.75)
    assert store.usage.spent_today_usd(day="2000-01-01") == pytest.approx(99.0)


def test_a_session_counts_all_its_days_and_nothing_of_others(store: Store) -> None:
    write(store, "s1", row("t1", 0.5))
    write(store, "s2", row("t7", 1.0))
    file_row_on(store, "2000-01-01", 2.0)
    assert store.usage.spent_session_usd("s1") == pytest.approx(2.5)
    assert store.usage.spent_session_usd("s2") == pytest.approx(1.0)
    assert store.usage.spent_session_usd("nope") == 0.0


def test_calls_of_unknown_cost_count_as_nothing(store: Store) -> None:
    write(store, "s1", row("t1", None), row("t1", 0.5))
    assert store.usage.spent_today_usd() == pytest.approx(0.5)
    assert store.usage.spent_session_usd("s1") == pytest.approx(0.5)


def test_one_turn_can_be_left_out(store: Store) -> None:
    write(store, "s1", row("t1", 0.5), row("t2", 0.25))
    write(store, "s2", row("t2", 1.0))  # the same turn id in another session stays in
    assert store.usage.spent_today_usd(except_turn=("s1", "t2")) == pytest.approx(1.5)
    assert store.usage.spent_session_usd("s1", except_turn="t2") == pytest.approx(0.5)


def test_usage_survives_the_retention_sweep(store: Store) -> None:
    write(store, "s1", row("t1", 0.5))
    assert store.delete_sessions_before(time.time() + 10) == 2
    assert store.usage.spent_today_usd() == pytest.approx(0.5)


def test_a_turn_counts_written_and_unwritten_calls_once(store: Store) -> None:
    write(store, "s2", row("t9", 1.0))  # another session, today
    write(store, "s1", row("t1", 0.25))  # an earlier turn of this session
    turn = turn_spending(
        session_limit=0.6,
        day_limit=1.6,
        profile=PROFILE,
        store=store.usage,
        session_id="s1",
        turn_id="t2",
        session_cost=lambda: None,
    )
    turn.observe(CALL)
    write(store, "s1", row("t2", CALL_USD))  # the recorder saved the first call
    turn.observe(CALL)  # the second is still in memory
    assert turn.cost_usd == pytest.approx(2 * CALL_USD)
    assert turn.guard.check(0.0) is None  # session 0.25 + 0.26 = 0.51, day 1.51
    stop = turn.check([])  # the next call, about $0.14, would pass both
    assert stop is not None
    assert SESSION_KEY in stop and "$0.51" in stop
    assert DAY_KEY in stop and "$1.51" in stop
