"""No `seq` is used twice, even when a crash loses events that were never stored."""

from __future__ import annotations

from pathlib import Path

from coding_harness.daemon.sessions.session import SEQ_BLOCK, Session, SessionTable
from coding_harness.daemon.store.db import Store
from coding_harness.daemon.store.restore import restore_sessions


def open_store(tmp_path: Path) -> Store:
    return Store(tmp_path / "state" / "sessions.db")


def test_after_a_crash_numbering_resumes_past_every_seq_a_client_saw(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.create_session(id="s1", cwd=str(tmp_path), provider=None, model=None, created_at=0.0)
    session = Session(id="s1", cwd=tmp_path, store=store)
    session.emit("notice", {"message": "stored"})
    session.flush_events()
    seen = [session.emit("notice", {"message": f"lost {n}"}).seq for n in range(5)]
    store.close()  # a crash: the last five events were never written

    again = open_store(tmp_path)
    table = SessionTable()
    restore_sessions(again, table, event_limit=100)
    restored = table.get("s1")
    assert restored is not None
    assert [e.seq for e in restored.events] == [1]
    next_seq = restored.emit("notice", {"message": "after"}).seq
    assert next_seq > max(seen)
    assert next_seq == 1 + SEQ_BLOCK + 1  # reserved 1..1001 at the first event
    again.close()


def test_the_reservation_is_written_once_a_block(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.create_session(id="s1", cwd=str(tmp_path), provider=None, model=None, created_at=0.0)
    session = Session(id="s1", cwd=tmp_path, store=store)
    writes: list[int] = []
    reserve = store.reserve_seq
    store.reserve_seq = lambda sid, upto: (writes.append(upto), reserve(sid, upto))[1]  # type: ignore[method-assign]
    for _ in range(SEQ_BLOCK + 2):
        session.emit("notice", {"message": "x"})
    assert writes == [1 + SEQ_BLOCK, SEQ_BLOCK + 2 + SEQ_BLOCK]
    store.close()


def test_a_sessions_permission_mode_survives_a_restart(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.create_session(id="s1", cwd=str(tmp_path), provider=None, model=None, created_at=0.0)
    store.set_mode("s1", "accept-edits")
    store.set_mode("s1", "read-only")
    store.close()
    again = open_store(tmp_path)
    table = SessionTable()
    restore_sessions(again, table, event_limit=100)
    restored = table.get("s1")
    assert restored is not None and restored.options.mode == "read-only"
    again.close()


def test_a_mode_given_at_creation_survives_a_restart(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.create_session(
        id="s1", cwd=str(tmp_path), provider=None, model=None, created_at=0.0, mode="read-only"
    )
    store.create_session(id="s2", cwd=str(tmp_path), provider=None, model=None, created_at=1.0)
    store.close()
    again = open_store(tmp_path)
    table = SessionTable()
    restore_sessions(again, table, event_limit=100)
    first, second = table.get("s1"), table.get("s2")
    assert first is not None and first.options.mode == "read-only"
    assert second is not None and second.options.mode is None
    again.close()
