"""`launcher.redial`: a fresh connection the daemon resets before answering `initialize`
(a daemon on its way out) is tried again, within the deadline, like a refused one."""

from __future__ import annotations

import json
import select
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from coding_harness.client.session.launcher import redial
from coding_harness.protocol.client import Connection, DaemonUnreachable


class ResettingListener:
    """Resets its first `resets` connections once they sent something (closing with the
    bytes unread, which the peer sees as ECONNRESET), then answers `initialize`."""

    def __init__(self, path: Path, resets: int) -> None:
        self.accepted = 0
        self.resets = resets
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(path))
        self._listener.listen(8)
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self.accepted += 1
            with conn:
                select.select([conn], [], [], 5)  # the request arrived; left unread
                if self.accepted <= self.resets:
                    continue
                request = json.loads(conn.makefile("rb").readline())
                answer = {"jsonrpc": "2.0", "id": request["id"], "result": {"protocol": 1}}
                conn.sendall(json.dumps(answer).encode() + b"\n")
                select.select([conn], [], [], 5)  # until the client hangs up

    def close(self) -> None:
        self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accept; close alone does not
        self._listener.close()
        self._thread.join(5)
        assert not self._thread.is_alive()


@pytest.fixture
def socket_path() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="rd-", dir="/tmp") as folder:
        yield Path(folder) / "d.sock"


def test_a_reset_before_initialize_is_answered_is_tried_again(socket_path: Path) -> None:
    listener = ResettingListener(socket_path, resets=2)
    try:
        conn = redial(socket_path, lambda c: c.initialize("test", "0"), seconds=10)
        with conn:
            assert conn.server_info == {"protocol": 1}
    finally:
        listener.close()
    assert listener.accepted == 3


def test_resets_past_the_deadline_are_raised(socket_path: Path) -> None:
    listener = ResettingListener(socket_path, resets=1000)
    try:
        with pytest.raises(DaemonUnreachable, match="connection lost"):
            redial(socket_path, lambda c: c.initialize("test", "0"), seconds=0.5)
    finally:
        listener.close()


def test_take_over_carries_on_over_the_new_socket(socket_path: Path) -> None:
    listener = ResettingListener(socket_path, resets=0)
    try:
        first = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        lost = Connection(first, socket_path)
        first.close()
        fresh = redial(socket_path, lambda c: c.initialize("test", "0"), seconds=10)
        lost.take_over(fresh)
        with lost:
            assert lost.server_info == {"protocol": 1} and lost.broken is None
    finally:
        listener.close()
