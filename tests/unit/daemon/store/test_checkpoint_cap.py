"""The checkpoint store's cap is fair between projects, and a session that lost
checkpoints to it is told: a real store on disk, real sessions, small caps."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from coding_harness.daemon.sessions.session import Session
from coding_harness.daemon.store.checkpoints import CheckpointStore, sha256
from coding_harness.daemon.store.db import Store
from coding_harness.daemon.store.turn_checkpoints import TurnCheckpoints
from coding_harness.protocol.methods import EventKind

KB = 1000


def workspace(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    root.mkdir()
    return root


def one_turn(store: CheckpointStore, session: str, root: Path, turn: str) -> None:
    """A turn that rewrites a file of its own holding 1,000 distinct bytes."""
    rel = f"{turn}.txt"
    (root / rel).write_text((turn * KB)[:KB])
    store.take(session, turn, root, rel, after=sha256(b"changed"))
    (root / rel).write_text("changed")


def kept_turns(store: CheckpointStore, session: str) -> list[str]:
    return [c.turn for c in store.of_session(session)]


def blob_bytes(store: CheckpointStore) -> int:
    return sum(p.stat().st_size for p in store.folder.glob("??/*"))


def test_the_project_that_holds_the_most_gives_up_its_own_oldest_first(tmp_path: Path) -> None:
    store = CheckpointStore(sqlite3.connect(":memory:"), tmp_path / "blobs", cap_bytes=5 * KB)
    quiet, busy = workspace(tmp_path, "quiet"), workspace(tmp_path, "busy")
    for n in range(2):  # the quiet project's history is the oldest in the store
        one_turn(store, "q", quiet, f"q{n}")
    for n in range(8):  # then a repository's recipes churn out checkpoints
        one_turn(store, "b", busy, f"b{n}")
    assert kept_turns(store, "q") == ["q0", "q1"]
    assert kept_turns(store, "b")[-1] == "b7" and "b0" not in kept_turns(store, "b")
    assert store.dropped("q") == []
    assert store.dropped("b")[0] == "b0"
    assert blob_bytes(store) <= 5 * KB


def test_a_session_whose_checkpoints_were_dropped_is_told_at_its_next_turn(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "state" / "sessions.db", checkpoint_cap=5 * KB)
    big, small = workspace(tmp_path, "big"), workspace(tmp_path, "small")
    for sid, root in (("s-big", big), ("s-small", small)):
        store.create_session(id=sid, cwd=str(root), provider=None, model=None, created_at=0.0)
    sessions = {
        sid: Session(id=sid, cwd=root, store=store)
        for sid, root in (("s-big", big), ("s-small", small))
    }
    for n in range(4):  # the big project holds 4,000 bytes
        one_turn(store.checkpoints, "s-big", big, f"t{n}")
    for n in range(2):  # the small one's writes push the store over its cap
        one_turn(store.checkpoints, "s-small", small, f"u{n}")
    assert kept_turns(store.checkpoints, "s-small") == ["u0", "u1"]
    assert kept_turns(store.checkpoints, "s-big")[0] != "t0"

    for sid in sessions:  # each session's next turn starts
        TurnCheckpoints(sessions[sid], "next").before_event(EventKind.TURN_STARTED, {})
    notices = {
        sid: [e.data["message"] for e in s.events if e.kind == EventKind.NOTICE]
        for sid, s in sessions.items()
    }
    assert notices["s-small"] == []
    [told] = notices["s-big"]
    assert "turn t0" in told and "(5,000 bytes)" in told and "cannot put back" in told
    again = TurnCheckpoints(sessions["s-big"], "later")  # told once, not at every turn
    again.before_event(EventKind.TURN_STARTED, {})
    assert len([e for e in sessions["s-big"].events if e.kind == EventKind.NOTICE]) == 1
    assert store.checkpoints.dropped("s-big")[0] == "t0"  # the listing still names it
    store.close()


def test_rows_from_an_older_daemon_get_their_project_from_the_session(tmp_path: Path) -> None:
    db = sqlite3.connect(":memory:")
    db.executescript(
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, cwd TEXT NOT NULL);"
        "INSERT INTO sessions VALUES ('s1', '/work/p');"
        "CREATE TABLE checkpoints (session_id TEXT NOT NULL, turn TEXT NOT NULL,"
        " path TEXT NOT NULL, before_blob TEXT, before_mode INTEGER, after TEXT,"
        " at REAL NOT NULL, undone INTEGER NOT NULL DEFAULT 0,"
        " restorable INTEGER NOT NULL DEFAULT 1, PRIMARY KEY (session_id, turn, path));"
        "INSERT INTO checkpoints (session_id, turn, path, at) VALUES ('s1', 't1', 'a.py', 1.0);"
    )
    CheckpointStore(db, tmp_path / "blobs")
    assert db.execute("SELECT project, size FROM checkpoints").fetchall() == [("/work/p", None)]
