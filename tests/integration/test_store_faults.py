"""A store that cannot be written, and text the store cannot hold: every turn still ends.

A real daemon whose state folder is a tiny tmpfs that the test fills (writes
fail with ENOSPC, SQLite's SQLITE_FULL) and frees again, and a lone surrogate
sent in `session.submit` over the raw socket. The turn ends with
`turn.finished`, the clients are told why, the session is idle and usable, and
nothing the store could not write is lost once there is room again.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from coding_harness.protocol import errors
from coding_harness.protocol.client import Connection
from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import client, run_harness, start_daemon, wait_for_event
from tests.support.tiny_fs import fill, seen_by, start_daemon_on_tiny_fs
from tests.support.waiting import wait_for

SURROGATE = "\\ud800"  # as it appears in the JSON text: valid JSON, not valid Unicode


def send_raw(conn: Connection, request_id: int, method: str, params_json: str) -> Any:
    """Send a request written by hand (the client library cannot encode a lone surrogate)."""
    line = f'{{"jsonrpc":"2.0","id":{request_id},"method":"{method}","params":{params_json}}}\n'
    with socket.socket(fileno=os.dup(conn.fileno())) as raw:
        raw.sendall(line.encode("ascii"))
    return conn.response(request_id, timeout=10)


def new_session(conn: Connection, cwd: Path) -> str:
    session: str = conn.request("session.create", {"cwd": str(cwd)})["session"]
    conn.request("session.attach", {"session": session})
    return session


def state_of(conn: Connection, session: str) -> str:
    listed = {s["session"]: s for s in conn.request("session.list")["sessions"]}
    return str(listed[session]["state"])


@pytest.mark.parametrize(
    "params",
    [
        '{{"session":"{s}","text":"fix it {x}"}}',
        '{{"session":"{s}","text":"ok","options":{{"skill":"a{x}"}}}}',
        '{{"session":"{s}","text":"ok","env":{{"KEY":"v{x}"}}}}',
    ],
    ids=["text", "options", "env"],
)
def test_a_lone_surrogate_in_submit_is_refused_and_the_session_stays_usable(
    sandbox: Sandbox, model: FakeModelServer, daemon: subprocess.Popen[bytes], params: str
) -> None:
    with client(sandbox.socket) as conn:
        session = new_session(conn, sandbox.workspace)
        with pytest.raises(errors.InvalidParams, match="invalid text"):
            send_raw(conn, 900, "session.submit", params.format(s=session, x=SURROGATE))
        assert state_of(conn, session) == "idle"
        model.add(Reply(content="fine"))
        conn.request("session.submit", {"session": session, "text": "hello"})
        finished = wait_for_event(conn, "turn.finished", timeout=10)
        assert finished["data"]["exit_code"] == 0
        assert conn.request("session.reset", {"session": session}) == {"messages": 0}


@pytest.fixture
def full_state(sandbox: Sandbox, model: FakeModelServer) -> Iterator[subprocess.Popen[bytes]]:
    """A daemon whose state folder is a 512 KiB tmpfs."""
    process = start_daemon_on_tiny_fs(
        sandbox.socket,
        sandbox.env,
        sandbox.root / "state",
        "512k",
        sandbox.root / "daemon.log",
    )
    try:
        yield process
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_full_state_folder_ends_the_turn_and_saving_resumes_once_there_is_room(
    sandbox: Sandbox, model: FakeModelServer, full_state: subprocess.Popen[bytes]
) -> None:
    (sandbox.workspace / "notes.txt").write_text("remember the milk\n")
    folder = seen_by(full_state, sandbox.root / "state" / "coding-harness")
    with client(sandbox.socket) as conn:
        session = new_session(conn, sandbox.workspace)
        filler = fill(folder)
        model.add(
            Reply(tool_calls=[tool_call("read_file", path="notes.txt")]),
            Reply(content="It says milk."),
        )
        conn.request("session.submit", {"session": session, "text": "what does it say?"})
        error = wait_for_event(conn, "error", timeout=10)
        assert "history not saved: disk full" in error["data"]["message"]
        assert "the state folder is full" in error["data"]["message"]
        finished = wait_for_event(conn, "turn.finished", timeout=10)
        assert finished["data"]["exit_code"] == 0
        assert finished["data"]["reply"] == "It says milk."
        assert state_of(conn, session) == "idle"
        assert conn.request("daemon.status")["running_turns"] == 0

        # A one-shot run on a still-full disk ends too, and says why.
        model.add(Reply(content="still here"))
        run = run_harness(["-p", "anyone there?"], env=sandbox.env, cwd=sandbox.workspace)
        assert run.returncode == 0, run.stderr
        assert "still here" in run.stdout
        assert "history not saved: disk full" in run.stderr

        filler.unlink()
        model.add(Reply(content="saved now"))
        conn.request("session.submit", {"session": session, "text": "and now?"})
        # Saving resumes on its own (a retry after a pause), before or after the turn ends.
        seen = dict.fromkeys(("saved", "turn.finished"), False)
        deadline = time.monotonic() + 15
        while not all(seen.values()) and time.monotonic() < deadline:
            note = conn.next_notification(timeout=deadline - time.monotonic()) or {}
            params = note.get("params") or {}
            if params.get("kind") == "turn.finished":
                seen["turn.finished"] = True
            elif params.get("data", {}).get("message") == "history saved again":
                seen["saved"] = True
        assert all(seen.values()), seen

    # The second turn's row is written as it finishes, which may come a moment after
    # its event on a busy machine: read until both turns are finished (or time is up).
    bodies, turns = wait_for(
        lambda: _stored_turns(folder, sandbox.root, session, "finished", 2),
        "both turns finished in the store",
    )
    # Nothing written while the disk was full is missing once there is room again.
    assert [m["content"] for m in bodies if m["role"] == "user"] == [
        "what does it say?",
        "and now?",
    ]
    assert any("remember the milk" in str(m.get("content")) for m in bodies)
    assert turns == [("finished",), ("finished",)]


def _stored_turns(
    folder: Path, root: Path, session: str, state: str, count: int
) -> tuple[list[dict[str, Any]], list[tuple[str]]] | None:
    """The session's stored messages and turn states once `count` turns are in `state`.
    SQLite resolves /proc/PID/root back to our own root, so it reads a copy."""
    copy = Path(tempfile.mkdtemp(dir=root, prefix="copy-"))
    for name in ("sessions.db", "sessions.db-wal"):
        shutil.copyfile(folder / name, copy / name)
    with sqlite3.connect(copy / "sessions.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        bodies = [
            json.loads(row[0])
            for row in db.execute(
                "SELECT body FROM messages WHERE session_id = ? ORDER BY idx", (session,)
            )
        ]
        turns = db.execute(
            "SELECT state FROM turns WHERE session_id = ? ORDER BY started_at", (session,)
        ).fetchall()
    return (bodies, turns) if turns.count((state,)) == count else None


def test_a_full_disk_during_an_edit_leaves_the_file_exactly_as_it_was(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    marker = sandbox.root / "check-ran"
    process = start_daemon_on_tiny_fs(
        sandbox.socket, sandbox.env, sandbox.workspace, "256k", sandbox.root / "daemon.log"
    )
    try:
        workspace = seen_by(process, sandbox.workspace)
        original = "def add(a, b):\n    return a - b\n" * 20
        (workspace / "calc.py").write_text(original)
        (workspace / "Makefile").write_text(f"check:\n\ttouch {marker}\n")
        fill(workspace)
        bigger = original + "# padding\n" * 500
        model.add(
            Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=original, new=bigger)]),
            Reply(content="The disk is full."),
        )
        run = run_harness(["-y", "-p", "grow calc.py"], env=sandbox.env, cwd=sandbox.workspace)
        assert run.returncode == 3, run.stderr
        assert "disk full: edit not applied to 'calc.py'" in run.stderr
        assert (workspace / "calc.py").read_bytes() == original.encode()
        assert sorted(p.name for p in workspace.iterdir()) == ["Makefile", "calc.py", "filler"]
        assert not marker.exists()  # make check did not run
        with client(sandbox.socket) as conn:
            [listed] = conn.request("session.list")["sessions"]
            history = conn.request("session.history", {"session": listed["session"]})
        [result] = [m for m in history["messages"] if m["role"] == "tool"]
        assert result["content"].startswith("disk full: edit not applied")
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_store_truncated_to_nothing_is_damage_and_the_next_client_is_told_once(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    daemon = start_daemon(sandbox.socket, sandbox.env)
    with client(sandbox.socket) as conn:
        new_session(conn, sandbox.workspace)
    daemon.terminate()
    daemon.wait(timeout=10)
    path = sandbox.root / "state" / "coding-harness" / "sessions.db"
    path.write_bytes(b"")  # what a bad copy or a full disk at the wrong moment leaves
    daemon = start_daemon(sandbox.socket, sandbox.env)
    try:
        first = run_harness(["sessions"], env=sandbox.env, cwd=sandbox.workspace)
        second = run_harness(["sessions"], env=sandbox.env, cwd=sandbox.workspace)
        assert "session store was damaged and moved to" in first.stderr
        assert "truncated" in first.stderr
        assert "damaged" not in second.stderr
        assert [p.stat().st_size for p in path.parent.glob("sessions.db.corrupt-*")] == [0]
    finally:
        daemon.terminate()
        daemon.wait(timeout=10)
