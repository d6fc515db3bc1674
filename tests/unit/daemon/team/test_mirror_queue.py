"""The mirror's queue: bounded, events dropped first, their sessions marked for catch-up."""

from __future__ import annotations

from coding_harness.daemon.team.mirror_queue import EVENTS, MirrorQueue


def events(sid: str, first: int, count: int, text: str = "x") -> dict[str, object]:
    return {"rows": [(sid, seq, "text.delta", text, 0.0) for seq in range(first, first + count)]}


def test_operations_come_out_in_order_in_batches_and_wake_the_pusher() -> None:
    woken: list[int] = []
    queue = MirrorQueue(on_put=lambda: woken.append(1))
    queue.put("create_session", "s1", {"cwd": "/w"})
    queue.put(EVENTS, "s1", events("s1", 1, 3))
    queue.put("turn_started", "s1", {"turn": "t1"})
    assert len(woken) == 3
    first = queue.take(2, 1 << 20)
    assert [op.what for op in first] == ["create_session", EVENTS]
    assert [op.what for op in queue.take(10, 1 << 20)] == ["turn_started"]
    assert len(queue) == 0 and queue.size == 0


def test_a_batch_put_back_comes_out_first_and_whole() -> None:
    queue = MirrorQueue()
    queue.put(EVENTS, "s1", events("s1", 1, 2))
    queue.put(EVENTS, "s1", events("s1", 3, 2))
    batch = queue.take(1, 1 << 20)
    queue.put(EVENTS, "s1", events("s1", 5, 2))
    queue.requeue(batch)
    seqs = [row[1] for op in queue.take(10, 1 << 20) for row in op.values["rows"]]
    assert seqs == [1, 2, 3, 4, 5, 6]


def test_past_its_bound_the_queue_drops_events_first_and_marks_their_sessions() -> None:
    queue = MirrorQueue(max_ops=4)
    queue.put("create_session", "s1", {})
    queue.put(EVENTS, "s1", events("s1", 1, 10))
    queue.put("turn_started", "s2", {})
    queue.put(EVENTS, "s2", events("s2", 1, 10))
    assert queue.behind == set()
    queue.put("turn_finished", "s2", {})  # the fifth: over the bound
    assert queue.behind == {"s1", "s2"}
    assert [op.what for op in queue.take(10, 1 << 20)] == [
        "create_session",
        "turn_started",
        "turn_finished",
    ]
    # While behind, a session's new events wait for the catch-up, not in memory.
    queue.put(EVENTS, "s1", events("s1", 11, 5))
    assert len(queue) == 0
    queue.caught_up("s1")
    queue.put(EVENTS, "s1", events("s1", 16, 5))
    assert len(queue) == 1 and queue.behind == {"s2"}


def test_the_bound_in_bytes_counts_the_event_text() -> None:
    queue = MirrorQueue(max_bytes=50_000)
    queue.put(EVENTS, "s1", events("s1", 1, 10, "y" * 1000))
    assert queue.behind == set() and queue.size > 10_000
    queue.put(EVENTS, "s2", events("s2", 1, 40, "y" * 1000))
    assert queue.behind == {"s1", "s2"} and len(queue) == 0 and queue.size == 0


def test_when_dropping_events_is_not_enough_everything_goes_and_every_session_is_behind() -> None:
    queue = MirrorQueue(max_ops=2)
    for sid in ("s1", "s2", "s3"):
        queue.put("turn_started", sid, {})
    assert len(queue) == 0 and queue.behind == {"s1", "s2", "s3"}
    assert queue.dropped == 3


def test_a_batch_put_back_drops_the_events_of_a_session_now_behind() -> None:
    queue = MirrorQueue(max_ops=3)
    queue.put(EVENTS, "s1", events("s1", 1, 2))
    batch = queue.take(10, 1 << 20)
    for _ in range(4):
        queue.put(EVENTS, "s1", events("s1", 3, 1))  # over the bound: s1 behind
    assert queue.behind == {"s1"}
    queue.requeue(batch)
    assert len(queue) == 0  # the catch-up copies them from the store
