"""The store's observer, the catch-up's reads of a real store, and the tail's one cursor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from coding_harness.daemon.sessions.session import Session
from coding_harness.daemon.store.db import Store
from coding_harness.daemon.store.usage_rows import UsageRow
from coding_harness.daemon.team import mirror_catchup
from coding_harness.daemon.team.mirror_catchup import lagging, local_heads, session_ops
from coding_harness.daemon.team.mirror_queue import EVENTS, MirrorQueue
from coding_harness.daemon.team.mirror_sql import usage_id
from coding_harness.daemon.team.mirror_tail import Tail

Told = list[tuple[str, str, dict[str, Any]]]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "sessions.db")


def usage(turn: str) -> UsageRow:
    return UsageRow(
        turn=turn,
        provider="fake",
        model="m",
        prompt_tokens=10,
        cached_tokens=0,
        completion_tokens=5,
        cost_usd=None,
    )


def fill(store: Store, sid: str, events: int) -> None:
    store.create_session(id=sid, cwd="/w", provider="fake", model="m", created_at=1.0)
    store.turn_started(sid, "t1", "do it")
    store.approval_requested(sid, "a1", "edit", "x.py")
    store.approval_resolved(sid, "a1", "yes", "", "harness (pid 1)")
    store.record_step(
        sid,
        first_index=0,
        messages=[{"role": "user", "content": "do it"}],
        events=[(1, "turn.started", {"turn": "t1"}, 2.0)],
        usage=[usage("t1"), usage("t1")],
    )
    store.record_events(sid, [(seq, "text.delta", {"text": "w"}, 3.0) for seq in range(2, events)])
    store.usage.record(sid, [usage("t1")])
    store.turn_finished(sid, "t1", 0)


def test_the_observer_hears_each_write_after_it_and_cannot_fail_one(store: Store) -> None:
    told: Told = []
    store.observe(lambda what, sid, values: told.append((what, sid, values)))

    def broken(what: str, sid: str, values: dict[str, Any]) -> None:
        raise RuntimeError("an observer's bug")

    store.observe(broken)
    fill(store, "s1", 5)
    assert [what for what, _sid, _values in told] == [
        "create_session",
        "turn_started",
        "approval_requested",
        "approval_resolved",
        EVENTS,
        "usage",
        EVENTS,
        "usage",
        "turn_finished",
    ]
    assert [row[1] for row in told[4][2]["rows"]] == [1]
    assert [row[1] for row in told[6][2]["rows"]] == [2, 3, 4]
    # Every write was made in spite of the broken observer.
    assert local_heads(store.reader()) == {"s1": 4}


def test_an_observer_undone_hears_nothing_more(store: Store) -> None:
    told: Told = []
    undo = store.observe(lambda what, sid, values: told.append((what, sid, values)))
    undo()
    fill(store, "s1", 3)
    assert told == []


def test_the_catch_up_reads_the_session_whole_and_its_usage_with_the_queued_ids(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    told: Told = []
    store.observe(lambda what, sid, values: told.append((what, sid, values)))
    fill(store, "s1", 12)
    monkeypatch.setattr(mirror_catchup, "PAGE", 4)
    ops = list(session_ops(store.reader(), "s1", after_seq=2))
    assert [op.what for op in ops[:4]] == ["stored_session", "turn_row", "approval_row", "usage"]
    assert ops[0].values["cwd"] == "/w" and ops[0].values["closed"] is False
    assert ops[1].values["state"] == "finished" and ops[1].values["exit_code"] == 0
    assert ops[2].values["row"][3:6] == ("yes", "", "harness (pid 1)")
    pages = [[row[1] for row in op.values["rows"]] for op in ops if op.what == EVENTS]
    assert pages == [[3, 4, 5, 6], [7, 8, 9, 10], [11]]
    queued_ids = {
        usage_id("s1", row, index)
        for what, _sid, values in told
        if what == "usage"
        for index, row in enumerate(values["rows"])
    }
    read_ids = {
        usage_id("s1", row, index)
        for op in ops
        if op.what == "usage"
        for index, row in enumerate(op.values["rows"])
    }
    assert len(queued_ids) == 3 and read_ids == queued_ids


def test_the_sessions_to_copy_are_those_the_hub_lacks_or_has_behind() -> None:
    local = {"new": 0, "even": 10, "behind": 10, "ahead": 5, "dropped": 7}
    hub = {"even": 10, "behind": 4, "ahead": 9, "dropped": 7, "elsewhere": 3}
    assert lagging(local, hub, also={"dropped"}) == {"new": 0, "behind": 4, "dropped": 7}


def emit(session: Session, count: int) -> None:
    for _ in range(count):
        session.emit("text.delta", {"text": "w"})


def queued_seqs(queue: MirrorQueue) -> list[int]:
    return [row[1] for op in queue.take(1000, 1 << 30) for row in op.values["rows"]]


def test_the_tail_queues_each_event_once_from_memory_or_from_the_store() -> None:
    queue = MirrorQueue()
    tail = Tail(queue)
    session = Session(id="s1", cwd=Path("/w"))
    tail.new_session("s1")
    emit(session, 3)
    tail.read_memory([session])  # 1-3 from memory
    emit(session, 2)
    stored = [(seq, kind, data, at) for seq, kind, data, at in session.take_pending_events()]
    tail.stored("s1", [("s1", seq, kind, "{}", at) for seq, kind, _data, at in stored])  # 4-5
    emit(session, 1)
    tail.read_memory([session])  # 6
    tail.read_memory([session])  # nothing new
    assert queued_seqs(queue) == [1, 2, 3, 4, 5, 6]


def test_the_tail_leaves_a_session_of_unknown_cursor_to_the_store_and_the_catch_up() -> None:
    queue = MirrorQueue()
    tail = Tail(queue)
    session = Session(id="s1", cwd=Path("/w"))
    emit(session, 4)
    tail.read_memory([session])
    assert len(queue) == 0
    tail.caught_up("s1", 2, dropped=False)  # the store held 1-2; the hub has them now
    tail.read_memory([session])
    assert queued_seqs(queue) == [3, 4]


def test_after_a_drop_the_cursor_goes_back_to_what_the_catch_up_copied() -> None:
    queue = MirrorQueue()
    tail = Tail(queue)
    session = Session(id="s1", cwd=Path("/w"))
    tail.new_session("s1")
    emit(session, 6)
    tail.read_memory([session])
    queue.take(1000, 1 << 30)  # as if dropped past the bound
    tail.caught_up("s1", 4, dropped=True)
    tail.read_memory([session])
    assert queued_seqs(queue) == [5, 6]
    tail.caught_up("s1", 3, dropped=False)  # queued past the copy: kept, not queued again
    tail.read_memory([session])
    assert len(queue) == 0
