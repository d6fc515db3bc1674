"""Which editor a session's read_file asks, and what counts as its answer.

Real `Connection`s over socketpairs: the far end reads what the daemon sends;
answers are handed to the connection as the socket server would route them.
"""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path
from typing import Any

from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.sessions.editor_buffers import EditorBuffers
from coding_harness.daemon.sessions.session import Session


async def attached(session: Session, *, reads: bool) -> tuple[Connection, socket.socket]:
    near, far = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    _reader, writer = await asyncio.open_unix_connection(sock=near)
    conn = Connection(writer, peer_pid=None)
    conn.initialized, conn.reads_buffers = True, reads
    session.attach(conn)
    return conn, far


async def request_on(far: socket.socket) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    far.setblocking(False)
    data = await asyncio.wait_for(loop.sock_recv(far, 65536), 5)
    message: dict[str, Any] = json.loads(data.splitlines()[0])
    return message


def test_the_latest_editor_is_asked_and_odd_answers_mean_the_disk(tmp_path: Path) -> None:
    async def main() -> None:
        session = Session(id="s-1", cwd=tmp_path)
        buffers = EditorBuffers(session, timeout=5)
        assert await buffers.read_text(tmp_path / "a.py") is None  # nobody attached
        first, first_far = await attached(session, reads=True)
        second, second_far = await attached(session, reads=True)
        terminal, terminal_far = await attached(session, reads=False)
        assert buffers.editor() is second
        for answer, text in [({"content": "buf"}, "buf"), ({"content": 5}, None), ([], None)]:
            reading = asyncio.create_task(buffers.read_text(tmp_path / "a.py"))
            request = await request_on(second_far)
            assert request["params"] == {"session": "s-1", "path": str(tmp_path / "a.py")}
            assert second.answer({"jsonrpc": "2.0", "id": request["id"], "result": answer})
            assert await reading == text
        second.close()
        assert buffers.editor() is first  # a closed one is passed over
        for conn, far in [(first, first_far), (second, second_far), (terminal, terminal_far)]:
            conn.close()
            far.close()

    asyncio.run(main())


def test_an_editor_that_errs_means_the_disk(tmp_path: Path) -> None:
    async def main() -> None:
        session = Session(id="s-1", cwd=tmp_path)
        editor, far = await attached(session, reads=True)
        reading = asyncio.create_task(EditorBuffers(session).read_text(tmp_path / "a.py"))
        request = await request_on(far)
        error = {"code": -32603, "message": "no buffer"}
        assert editor.answer({"jsonrpc": "2.0", "id": request["id"], "error": error})
        assert await reading is None
        editor.close()
        far.close()

    asyncio.run(main())
