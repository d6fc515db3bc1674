"""What the daemon sends stays under its limits, and a client that falls behind catches up.

A real daemon, the fake model server, raw sockets and the real `harness`
command: a 20 MiB answer, unread replies piling up, a reader that stops, a
one-shot client stopped with SIGSTOP mid-stream.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import socket
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from typing import Any

import pytest

from coding_harness.daemon.server.outgoing import EVENT_LIMIT
from coding_harness.daemon.sessions.session import EVENT_LOG_LIMIT
from coding_harness.protocol import errors
from coding_harness.protocol.client import Connection
from coding_harness.protocol.framing import MAX_MESSAGE_BYTES
from coding_harness.protocol.history_pages import read_history, read_message_text
from tests.integration.conftest import Sandbox
from tests.support import waiting
from tests.support.big_answers import big_text, stream_in_large_pieces
from tests.support.fake_model_server import FakeModelServer, Reply
from tests.support.processes import accepts, client, events_until_finished, run_harness

PROMPT = "list the numbers in calc.py"
INIT = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocol":1}}\n'


def numbered(count: int) -> str:
    """`count` pieces of exactly 7 characters: the fake server streams one per delta."""
    return "".join(f"{i:06d} " for i in range(count))


@pytest.fixture
def coarse_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    stream_in_large_pieces(monkeypatch)


def open_session(conn: Connection, sandbox: Sandbox) -> str:
    session = str(conn.request("session.create", {"cwd": str(sandbox.workspace)})["session"])
    conn.request("session.attach", {"session": session})
    return session


def submit(conn: Connection, session: str, text: str = PROMPT) -> None:
    params = {"session": session, "text": text, "options": {"route": "coding"}}
    conn.request("session.submit", params)


# -- item 8 / RELIABILITY 76: nothing over the limit ------------------------------------


def test_a_20_mib_answer_streams_under_the_limit_and_pages_back_whole(
    sandbox: Sandbox, model: FakeModelServer, daemon, coarse_stream
) -> None:
    answer = big_text(20 * 1024 * 1024)
    model.add(Reply(content=answer))
    # The client refuses any line over 16 MiB (ProtocolViolation): every line is read here.
    with client(sandbox.socket) as conn:
        session = open_session(conn, sandbox)
        submit(conn, session)
        events = events_until_finished(conn)
        for event in events:
            assert len(json.dumps(event, ensure_ascii=False).encode()) < EVENT_LIMIT
        deltas = "".join(e["data"]["text"] for e in events if e["kind"] == "text.delta")
        assert deltas == answer  # split into several events, nothing cut
        finished = events[-1]["data"]
        assert finished["exit_code"] == 0
        assert finished["cut"]["reply"]["chars"] == len(answer)
        assert answer.startswith(finished["reply"][: finished["cut"]["reply"]["shown"]])
        index = finished["reply_message"]
        assert f'session.history {{"offset": {index}, "limit": 1}}' in finished["reply"][-300:]

        first = conn.request("session.history", {"session": session})
        assert len(json.dumps(first).encode()) <= 4 * 1024 * 1024
        assert first["total"] == 2 and first["next_offset"] is not None
        assert read_message_text(conn, session, index) == answer
        history = read_history(conn, session)
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert history[1]["content"] == answer


def test_oneshot_prints_a_20_mib_answer_whole(
    sandbox: Sandbox, model: FakeModelServer, coarse_stream
) -> None:
    answer = big_text(20 * 1024 * 1024 - 1) + "\n"
    model.add(Reply(content=answer))
    result = run_harness(["-p", PROMPT], env=sandbox.env, cwd=sandbox.workspace)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout == answer


# -- item 9 / RELIABILITY 25: unread replies ------------------------------------------


def unread_bytes(sock: socket.socket) -> int:
    raw = fcntl.ioctl(sock.fileno(), termios.FIONREAD, struct.pack("i", 0))
    return int(struct.unpack("i", raw)[0])


def read_answers(sock: socket.socket, count: int) -> list[dict[str, Any]]:
    sock.settimeout(20)
    answers: list[dict[str, Any]] = []
    buffer = b""
    while len(answers) < count:
        chunk = sock.recv(1 << 20)
        assert chunk, f"the daemon closed the connection after {len(answers)} answers"
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        answers += [json.loads(line) for line in lines]
    return answers


def test_unread_answers_make_the_daemon_refuse_more_as_overloaded(sandbox: Sandbox, daemon) -> None:
    """1,000 `session.history` calls (1 MB each) without reading (RELIABILITY 25)."""
    with client(sandbox.socket) as control:
        session = control.request("session.create", {"cwd": str(sandbox.workspace)})["session"]
        messages = [{"role": "user", "content": "x" * 100_000} for _ in range(10)]
        control.request("session.reset", {"session": session, "messages": messages})
    calls = b"".join(
        json.dumps(
            {"jsonrpc": "2.0", "id": i, "method": "session.history", "params": {"session": session}}
        ).encode()
        + b"\n"
        for i in range(1, 1001)
    )
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(str(sandbox.socket))
        sock.sendall(INIT + calls)
        # Wait, reading nothing, until the daemon has filled the socket and stopped writing.
        waiting.wait_for(lambda: unread_bytes(sock) > 0, "the first answers")
        seen = -1
        while unread_bytes(sock) != seen:
            seen = unread_bytes(sock)
            time.sleep(1.0)
        answers = read_answers(sock, 1001)
    by_id = {a["id"]: a for a in answers}
    assert sorted(by_id) == list(range(1001))  # every request answered once: nothing dropped
    refused = [a for a in answers if "error" in a]
    assert refused, "no request was refused while 1,000 MB of answers waited"
    for answer in refused:
        assert answer["error"]["code"] == errors.ServerOverloaded.code
        assert "overloaded" in answer["error"]["message"]
        assert answer["error"]["data"]["retry_after"] > 0
    assert sum("result" in a for a in answers) < 100


# -- item 10 / RELIABILITY 11, 77: falling behind and catching up ---------------------


def test_a_reader_that_stops_is_cut_off_and_replays_30000_events_in_pages(
    sandbox: Sandbox, model: FakeModelServer, daemon
) -> None:
    answer = numbered(30_000)
    model.add(Reply(content=answer), Reply(content="and live again"))
    with client(sandbox.socket, "watcher") as watcher:
        session = open_session(watcher, sandbox)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as stalled:
            stalled.connect(str(sandbox.socket))
            attach = {"jsonrpc": "2.0", "id": 1, "method": "session.attach"}
            attach["params"] = {"session": session}
            stalled.sendall(INIT + json.dumps(attach).encode() + b"\n")
            waiting.wait_for(lambda: waiting.lines_waiting(stalled) >= 2, "the attach answered")
            submit(watcher, session)
            watched = events_until_finished(watcher)  # the other client is unaffected
            assert len(watched) > 30_000
            stalled.settimeout(10)
            with pytest.raises((ConnectionResetError, EOFError)):
                while stalled.recv(1 << 20):
                    pass
                raise EOFError  # the daemon cut it off
    with client(sandbox.socket, "late") as late:
        result = late.request("session.attach", {"session": session, "since_seq": 0}, timeout=60)
        replayed = []
        while late.has_buffered():
            replayed.append(late.next_notification(timeout=0)["params"])
        assert result["replayed"] == len(replayed) == watched[-1]["seq"]
        assert result["missed"] == 0
        assert [e["seq"] for e in replayed] == list(range(1, len(replayed) + 1))
        assert replayed[-len(watched) :] == watched
        submit(late, session, "and again")
        live = events_until_finished(late)
        assert live[0]["seq"] == replayed[-1]["seq"] + 1  # then live, with no gap


def test_replay_reaches_past_the_in_memory_log_into_the_store(
    sandbox: Sandbox, model: FakeModelServer, daemon
) -> None:
    """More events than the daemon keeps in memory (50,000): the rest come from the store.

    Nobody follows the turn live (a reader on a busy machine may fall 10,000 messages
    behind and be cut off, as it should): the turn is waited for in `session.list`."""
    answer = numbered(EVENT_LOG_LIMIT + 2_000)
    model.add(Reply(content=answer))
    with client(sandbox.socket, "submitter") as submitter:
        session = open_session(submitter, sandbox)
        submitter.request("session.detach", {"session": session})
        submit(submitter, session)

        def finished() -> dict[str, Any] | None:
            (row,) = submitter.request("session.list", {})["sessions"]
            return row if row["state"] == "idle" and row["last_turn"] else None

        row = waiting.wait_for(finished, "the turn's end", within=90, every=0.2)
        submitter.request("daemon.status")  # the last events are flushed with the turn
    with client(sandbox.socket, "late") as late:
        result = late.request("session.attach", {"session": session, "since_seq": 0}, timeout=90)
        replayed = []
        while late.has_buffered():
            replayed.append(late.next_notification(timeout=0)["params"])
    last = replayed[-1]
    assert last["kind"] == "turn.finished" and last["seq"] > EVENT_LOG_LIMIT
    assert row["last_seq"] == last["seq"]
    assert result["missed"] == 0
    assert [e["seq"] for e in replayed] == list(range(1, last["seq"] + 1))
    deltas = "".join(e["data"]["text"] for e in replayed if e["kind"] == "text.delta")
    assert deltas == answer


# -- item 15 / RELIABILITY 9, 10: silent connections and a low fd limit ----------------


def read_message(sock: socket.socket) -> dict[str, Any]:
    data = b""
    while not data.endswith(b"\n"):
        chunk = sock.recv(65536)
        assert chunk, "the daemon closed the connection"
        data += chunk
    return dict(json.loads(data))


def test_connections_that_never_initialize_are_closed_after_10_s(sandbox: Sandbox, daemon) -> None:
    silent, trickling, serving = (socket.socket(socket.AF_UNIX) for _ in range(3))
    try:
        for sock in (silent, trickling, serving):
            sock.settimeout(20)
            sock.connect(str(sandbox.socket))
        trickling.sendall(b'{"jsonrpc":')  # an unfinished message, and no initialize
        serving.sendall(INIT)
        assert "result" in read_message(serving)
        for sock in (silent, trickling):
            refusal = read_message(sock)
            assert refusal["error"]["code"] == errors.NotInitialized.code
            assert "no initialize within 10 s" in refusal["error"]["message"]
            assert sock.recv(1) == b""
        serving.sendall(b'{"jsonrpc":"2.0","id":9,"method":"daemon.status"}\n')
        assert read_message(serving)["result"]["pid"] == daemon.pid
    finally:
        for sock in (silent, trickling, serving):
            sock.close()


LOW_FD_DAEMON = (
    "import os, resource, sys\n"
    "resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))\n"
    "os.execv(sys.executable, [sys.executable, '-m', 'coding_harness.daemon', *sys.argv[1:]])\n"
)


@pytest.fixture
def low_fd_daemon(sandbox: Sandbox) -> Iterator[subprocess.Popen[bytes]]:
    """A daemon allowed 64 file descriptors (`ulimit -n 64`)."""
    from tests.support.processes import wait_for_socket

    process = subprocess.Popen(
        [sys.executable, "-c", LOW_FD_DAEMON, "--socket", str(sandbox.socket)],
        env=sandbox.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_socket(sandbox.socket)
        yield process
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_low_fd_limit_refuses_extra_connections_in_the_daemons_words(
    sandbox: Sandbox, low_fd_daemon
) -> None:
    held: list[socket.socket] = []
    try:
        for _ in range(40):
            sock = socket.socket(socket.AF_UNIX)
            sock.settimeout(10)
            sock.connect(str(sandbox.socket))
            with contextlib.suppress(BrokenPipeError):  # refused: its answer is still there
                sock.sendall(INIT)
            held.append(sock)
        answers = [read_message(sock) for sock in held]
        busy = [a for a in answers if a.get("error", {}).get("code") == errors.ServerBusy.code]
        assert busy and all("close some clients" in a["error"]["message"] for a in busy)
        assert len(answers) - len(busy) <= 64 - 32  # fds kept for the daemon's own work
        # Top up until a new connection is refused, so the cap is full right now: a
        # connection still closing when the 40 came (the start-up probe) frees its
        # slot later.
        while True:
            held.append(socket.socket(socket.AF_UNIX))
            held[-1].connect(str(sandbox.socket))
            try:
                held[-1].sendall(INIT)
                if "error" in read_message(held[-1]):
                    break
            except (BrokenPipeError, ConnectionResetError):
                break  # refused and closed before our request was even read
        result = run_harness(["-p", "hi"], env=sandbox.env, cwd=sandbox.workspace, timeout=40)
        assert result.returncode == 4
        assert "close some clients" in result.stderr and "connection lost" not in result.stderr
    finally:
        for sock in held:
            sock.close()
    waiting.wait_for(lambda: accepts(sandbox.socket), "the daemon to accept again")
    with client(sandbox.socket) as again:  # accepting goes on once connections close
        assert again.request("daemon.status")["pid"] == low_fd_daemon.pid


def test_an_answer_over_the_limit_becomes_an_error(sandbox: Sandbox, daemon) -> None:
    """A batch of pages that together would pass 16 MiB: the rest are refused, retryable."""
    with client(sandbox.socket) as control:
        session = control.request("session.create", {"cwd": str(sandbox.workspace)})["session"]
        messages = [{"role": "user", "content": "y" * 1_000_000} for _ in range(4)]
        control.request("session.reset", {"session": session, "messages": messages})
    batch = [
        {"jsonrpc": "2.0", "id": i, "method": "session.history", "params": {"session": session}}
        for i in range(1, 31)
    ]
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(20)
        sock.connect(str(sandbox.socket))
        sock.sendall(INIT)
        read_message(sock)
        sock.sendall(json.dumps(batch).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(1 << 20)
            assert chunk
            data += chunk
    assert len(data) <= MAX_MESSAGE_BYTES
    answers = json.loads(data)
    assert sorted(a["id"] for a in answers) == list(range(1, 31))
    assert {a["error"]["code"] for a in answers if "error" in a} == {errors.ServerOverloaded.code}
