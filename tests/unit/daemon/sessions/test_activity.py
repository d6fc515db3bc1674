"""A session's turns as `session.list` reports them: the state, the turn a `harness
wait` waits for, the last one finished, and a background turn's notification."""

from __future__ import annotations

from pathlib import Path

from coding_harness.daemon.sessions.activity import FinishedTurn
from coding_harness.daemon.sessions.session import Session
from coding_harness.protocol.methods import EventKind


def _session(tmp_path: Path) -> Session:
    return Session(id="20261206-050000-abc123", cwd=tmp_path)


def test_a_turn_from_submit_to_its_end(tmp_path: Path) -> None:
    session = _session(tmp_path)
    assert session.summary()["pending_turn"] is None
    assert session.activity.wire_state("idle", False) == "idle"
    session.activity.submit("t-1", background=False)
    assert session.summary()["pending_turn"] == "t-1"
    assert session.activity.wire_state("idle", False) == "running"  # about to start
    with session.running():
        started = session.emit(EventKind.TURN_STARTED, {"turn": "t-1", "text": "fix  it\nnow"})
        assert session.activity.wire_state(session.state, True) == "queued"
        with session.waiting():
            assert session.activity.wire_state(session.state, False) == "waiting"
    session.emit(EventKind.TURN_FINISHED, {"turn": "t-1", "exit_code": 2, "reply": "no"})
    row = session.summary()
    assert row["short_id"] == "abc123" and row["pending_turn"] is None
    assert row["last_turn"]["exit_code"] == 2 and row["last_turn_seq"] == started.seq
    assert session.activity.wire_state("idle", False) == "failed"
    assert session.title == "fix it now"  # from the running turn, before the history has it


def test_a_restored_session_reads_its_turns_off_its_events(tmp_path: Path) -> None:
    first = _session(tmp_path)
    first.emit(EventKind.TURN_STARTED, {"turn": "t-9", "text": "x"})
    first.emit(EventKind.TURN_FINISHED, {"turn": "t-9", "exit_code": 130, "reply": ""})
    restored = _session(tmp_path)
    restored.events = list(first.events)  # as the store gives them back
    row = restored.summary()
    assert row["last_turn"]["turn"] == "t-9" and row["pending_turn"] is None
    assert restored.activity.wire_state("idle", False) == "idle"  # cancelled is not failed


def test_only_a_background_turn_is_announced(tmp_path: Path) -> None:
    session = _session(tmp_path)
    ended: list[FinishedTurn] = []
    session.activity.on_background_end = ended.append
    session.activity.submit("t-1", background=False)
    session.emit(EventKind.TURN_FINISHED, {"turn": "t-1", "exit_code": 0, "reply": "ok"})
    session.activity.submit("t-2", background=True)
    session.emit(EventKind.TURN_FINISHED, {"turn": "t-2", "exit_code": 1, "reply": "boom"})
    assert [(e.turn, e.exit_code, e.reply) for e in ended] == [("t-2", 1, "boom")]
