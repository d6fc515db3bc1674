"""A connection's outgoing queue is bounded in bytes as well as count (issue 10 item 9).

A real `Connection` over a socketpair whose far end does not read, so what is
sent piles up in the queue once the socket buffers are full.
"""

from __future__ import annotations

import asyncio
import socket

from coding_harness.daemon.server.connection import Connection, QueueLimits

KB = 1024
LIMITS = QueueLimits(
    max_messages=1000,
    max_bytes=2000 * KB,
    busy_messages=500,
    busy_bytes=1000 * KB,
    room_messages=5,
    room_bytes=200 * KB,
)


async def pair() -> tuple[Connection, socket.socket]:
    near, far = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    _reader, writer = await asyncio.open_unix_connection(sock=near)
    return Connection(writer, peer_pid=None, limits=LIMITS), far


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


def test_unread_bytes_make_the_connection_overloaded_then_cut_it_off() -> None:
    async def main() -> None:
        conn, far = await pair()
        message = b"x" * (100 * KB) + b"\n"
        while not conn.overloaded:  # a few go to the socket buffers, the rest wait
            conn.send_encoded(message)
            await settle()
        messages, size = conn.queued
        assert messages < 500 and 1000 * KB < size <= 1100 * KB  # bytes, not count, said so
        for _ in range(20):
            conn.send_encoded(message)
        assert conn.closed.is_set()  # too far behind: over 2000 KB waited
        assert conn.queued == (0, 0)  # and the backlog went with it
        far.close()

    asyncio.run(main())


def test_a_reader_that_catches_up_makes_room_again() -> None:
    async def main() -> None:
        conn, far = await pair()
        for _ in range(12):
            conn.send_encoded(b"y" * (100 * KB) + b"\n")
        await settle()
        waiting = asyncio.create_task(conn.wait_for_room())
        await settle()
        assert not waiting.done()
        far.setblocking(False)
        loop = asyncio.get_running_loop()
        while not waiting.done():
            await loop.sock_recv(far, 1 << 20)
        assert waiting.result() is True
        assert not conn.overloaded
        conn.close()
        far.close()

    asyncio.run(main())


def test_closing_wakes_a_waiting_replay_and_drops_the_queue() -> None:
    async def main() -> None:
        conn, far = await pair()
        for _ in range(12):
            conn.send_encoded(b"z" * (100 * KB) + b"\n")
        await settle()
        waiting = asyncio.create_task(conn.wait_for_room())
        await settle()
        conn.close(abort=True)
        assert await waiting is False
        assert conn.queued == (0, 0)
        far.close()

    asyncio.run(main())


def test_an_answer_over_the_message_limit_is_sent_as_an_error() -> None:
    async def main() -> None:
        near, far = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        _reader, writer = await asyncio.open_unix_connection(sock=near)
        conn = Connection(writer, peer_pid=None, max_message=1000)
        conn.send({"jsonrpc": "2.0", "id": 7, "result": {"text": "x" * 5000}})
        await settle()
        far.setblocking(False)
        line = await asyncio.get_running_loop().sock_recv(far, 65536)
        assert b'"code":-32000' in line and b'"id":7' in line and len(line) < 1000
        conn.close()
        far.close()

    asyncio.run(main())


def test_while_nothing_waits_a_message_is_on_the_socket_before_the_sender_yields() -> None:
    async def main() -> None:
        conn, far = await pair()
        conn.send_encoded(b'{"first": 1}\n')
        conn.send_encoded(b'{"second": 2}\n')
        far.setblocking(False)
        # No await since the sends: the writer task has not run, yet both are readable.
        assert far.recv(1 << 16) == b'{"first": 1}\n{"second": 2}\n'
        assert conn.queued == (0, 0)
        conn.close()
        far.close()

    asyncio.run(main())


def test_behind_a_backlog_messages_keep_their_order() -> None:
    async def main() -> None:
        conn, far = await pair()
        big = [bytes([65 + n % 26]) * (100 * KB) + b"\n" for n in range(12)]
        for message in [*big, b"last\n"]:
            conn.send_encoded(message)
        assert conn.queued[0] > 0  # the socket buffers filled, the rest queued
        far.setblocking(False)
        loop = asyncio.get_running_loop()
        received = b""
        while not received.endswith(b"last\n"):
            received += await loop.sock_recv(far, 1 << 20)
        assert received == b"".join([*big, b"last\n"])
        conn.close()
        far.close()

    asyncio.run(main())


def test_a_send_after_the_transport_closed_marks_the_connection_closed() -> None:
    async def main() -> None:
        conn, far = await pair()
        conn._writer.transport.abort()  # the peer went away under us
        conn.send_encoded(b'{"late": 1}\n')
        assert conn.closed.is_set()
        far.close()

    asyncio.run(main())
