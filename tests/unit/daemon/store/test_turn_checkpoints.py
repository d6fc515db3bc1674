"""The looks around a command over a real store and session: a file the command
swapped for a FIFO or a symlink out is kept as it was, and never read through."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

from coding_harness.daemon.sessions.session import Session
from coding_harness.daemon.store.db import Store
from coding_harness.daemon.store.turn_checkpoints import TurnCheckpoints

GUARD_SECONDS = 3  # only so that a regression fails instead of hanging the suite


def release(fifo: Path) -> None:
    """Give a reader blocked on `fifo` its end of file (no reader: nothing to do)."""
    with contextlib.suppress(OSError):
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


def test_a_file_swapped_for_a_fifo_or_a_symlink_is_kept_and_not_read(tmp_path: Path) -> None:
    root, outside = tmp_path / "w", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "id_rsa").write_text("secret")
    (root / "a.txt").write_text("a")
    (root / "b.txt").write_text("b")
    store = Store(tmp_path / "state" / "sessions.db")
    store.create_session(id="s1", cwd=str(root), provider=None, model=None, created_at=0.0)
    turn = TurnCheckpoints(Session(id="s1", cwd=root, store=store), "t1")

    async def command_between_looks() -> None:
        await turn.look_before()
        (root / "a.txt").unlink()
        os.mkfifo(root / "a.txt")  # a reader of it would wait for a writer forever
        (root / "b.txt").unlink()
        (root / "b.txt").symlink_to(outside / "id_rsa")
        try:
            await asyncio.wait_for(turn.look_after(), GUARD_SECONDS)
        finally:
            release(root / "a.txt")

    asyncio.run(command_between_looks())
    kept = {c.path: c for c in store.checkpoints.of_session("s1")}
    assert sorted(kept) == ["a.txt", "b.txt"]
    assert store.checkpoints.read_blob(kept["a.txt"].blob or "") == b"a"
    assert store.checkpoints.read_blob(kept["b.txt"].blob or "") == b"b"
    assert kept["b.txt"].after == ""  # not the digest of the key it now points at
    store.close()
