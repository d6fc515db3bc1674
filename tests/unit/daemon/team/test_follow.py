"""Readers of another runner's session against a real PostgreSQL: rows above the
cursor, in order, each once; woken by notifications, caught up without them;
stopped by a detach or by the client going away."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable
from typing import Any

from coding_harness.daemon.config.hub_settings import HubSettings, RunnerSettings
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.team.follow import followers_of
from coding_harness.daemon.team.runner import HubRunner

SID = "20261206-000000-abcdef"


async def _write(runner: HubRunner, seqs: range, notify: bool = True) -> None:
    async with runner.connection() as db:
        for seq in seqs:
            await db.execute(
                "INSERT INTO events (session_id, seq, kind, data, at)"
                " VALUES (%s, %s, 'notice', %s, 0)",
                (SID, seq, json.dumps({"message": f"m{seq}"})),
            )
        if notify:
            await db.execute("SELECT pg_notify('hub_events', %s)", (f"{SID}:{seqs[-1]}",))


class Far:
    """The client's end of the socket: the events it was sent, in order."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock, self.buffer, self.seqs = sock, b"", []

    async def until(self, done: Callable[[list[int]], bool]) -> list[int]:
        loop = asyncio.get_running_loop()
        while not done(self.seqs):
            data = await asyncio.wait_for(loop.sock_recv(self.sock, 65536), 10)
            self.buffer += data
            *lines, self.buffer = self.buffer.split(b"\n")
            for line in lines:
                note: dict[str, Any] = json.loads(line)
                assert note["params"]["session"] == SID
                self.seqs.append(note["params"]["seq"])
        return self.seqs


async def _connection() -> tuple[Connection, Far]:
    near, far = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    far.setblocking(False)
    _reader, writer = await asyncio.open_unix_connection(sock=near)
    return Connection(writer, peer_pid=None), Far(far)


def test_a_reader_follows_the_rows_and_stops_with_its_client(hub_url: str) -> None:
    settings = HubSettings(url=hub_url, name="t", person="bo", runner=RunnerSettings(name="b"))

    async def go() -> None:
        runner = HubRunner(settings)
        closing: list[socket.socket] = []
        await runner.start()
        try:
            await asyncio.wait_for(runner.ready.wait(), 20)
            await _write(runner, range(1, 4))
            followers = followers_of(runner)
            conn, far = await _connection()
            closing.append(far.sock)
            followers.follow(conn, SID, 1)
            assert await far.until(lambda s: len(s) >= 2) == [2, 3]
            await asyncio.wait_for(runner.listener.connected.wait(), 10)
            await _write(runner, range(4, 6))  # notified
            await _write(runner, range(6, 8), notify=False)  # found by the slow look
            assert await far.until(lambda s: len(s) >= 6) == [2, 3, 4, 5, 6, 7]
            assert followers.followed_by(conn) == [SID]
            assert followers.stop(conn, SID)
            assert followers.followed_by(conn) == []
            reader = followers.follow(conn, SID, 7)
            conn.close()  # the client went away: its reader ends
            assert reader.task is not None
            await asyncio.wait_for(reader.task, 10)
            assert len(followers) == 0
        finally:
            await runner.stop()
            for sock in closing:
                sock.close()

    asyncio.run(go())
