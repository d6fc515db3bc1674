"""The protocol client: retries when overloaded, the daemon's own words when refused.

A scripted peer on a socketpair plays the daemon (RELIABILITY 25; issue 10 item 15).
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from coding_harness.protocol import client as protocol_client
from coding_harness.protocol import errors
from coding_harness.protocol.client import Connection, DaemonRefused, DaemonUnreachable

Answer = Callable[[dict[str, Any]], list[dict[str, Any]]]


def overloaded(request: dict[str, Any], retry_after: float | None = 0.01) -> dict[str, Any]:
    error: dict[str, Any] = {"code": -32016, "message": "server overloaded: read, then retry"}
    if retry_after is not None:
        error["data"] = {"retry_after": retry_after}
    return {"jsonrpc": "2.0", "id": request["id"], "error": error}


class ScriptedDaemon:
    """Answers each request with what `answer` returns; records what it was sent."""

    def __init__(self, answer: Answer) -> None:
        self.near, self.far = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.answer = answer
        self.seen: list[dict[str, Any]] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        with self.far.makefile("rb") as lines:
            for line in lines:
                request = json.loads(line)
                self.seen.append(request)
                for message in self.answer(request):
                    self.far.sendall(json.dumps(message).encode() + b"\n")

    def close(self) -> None:
        self.far.close()
        self.near.close()


@pytest.fixture
def scripted() -> Iterator[Callable[[Answer], tuple[Connection, ScriptedDaemon]]]:
    made: list[ScriptedDaemon] = []

    def make(answer: Answer) -> tuple[Connection, ScriptedDaemon]:
        daemon = ScriptedDaemon(answer)
        made.append(daemon)
        return Connection(daemon.near, Path("scripted.sock")), daemon

    yield make
    for daemon in made:
        daemon.close()


def test_an_overloaded_request_is_sent_again_and_answers_in_between_are_kept(
    scripted: Callable[[Answer], tuple[Connection, ScriptedDaemon]],
) -> None:
    def answer(request: dict[str, Any]) -> list[dict[str, Any]]:
        event = {"jsonrpc": "2.0", "method": "event", "params": {"seq": request["id"]}}
        if request["id"] < 3:
            return [event, overloaded(request)]
        return [{"jsonrpc": "2.0", "id": request["id"], "result": {"ok": True}}]

    conn, daemon = scripted(answer)
    assert conn.request("session.history", {"session": "s1"}) == {"ok": True}
    assert [r["id"] for r in daemon.seen] == [1, 2, 3]
    assert all(r["method"] == "session.history" for r in daemon.seen)
    assert all(r["params"] == {"session": "s1"} for r in daemon.seen)
    assert [conn.next_notification(0)["params"]["seq"] for _ in range(2)] == [1, 2]  # type: ignore[index]


def test_retries_end_with_the_overloaded_error(
    scripted: Callable[[Answer], tuple[Connection, ScriptedDaemon]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(protocol_client, "RETRY_BASE", 0.001)
    monkeypatch.setattr(protocol_client, "RETRY_CAP", 0.01)
    conn, daemon = scripted(lambda request: [overloaded(request, None)])
    with pytest.raises(errors.ServerOverloaded):
        conn.request("daemon.status")
    assert len(daemon.seen) == protocol_client.RETRY_ATTEMPTS


def test_retry_delays_back_off_exponentially_with_full_jitter() -> None:
    for attempt in (1, 3, 6, 12):
        bound = min(protocol_client.RETRY_CAP, protocol_client.RETRY_BASE * 2 ** (attempt - 1))
        delays = [protocol_client.retry_delay(attempt, 0.1) for _ in range(200)]
        assert all(0.1 <= d <= 0.1 + bound for d in delays)
        assert len(set(delays)) > 100  # jittered, so clients do not retry in step
    assert protocol_client.retry_delay(1, 3600) <= 2 * protocol_client.RETRY_CAP


BUSY = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32015, "message": "the daemon already serves 512 connections; close some"},
}


def test_a_refused_connection_reports_the_daemons_words() -> None:
    near, far = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    far.sendall(json.dumps(BUSY).encode() + b"\n")
    far.close()  # as the daemon does: the refusal, then the connection closed
    with Connection(near, Path("busy.sock")) as conn, pytest.raises(DaemonRefused) as refused:
        conn.initialize("test", "0")
    assert "already serves 512 connections" in str(refused.value)


def test_a_closing_daemons_last_word_is_kept() -> None:
    near, far = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    late = {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "no init; bye"}}
    far.sendall(json.dumps(late).encode() + b"\n")
    with Connection(near, Path("late.sock")) as conn:
        conn.send_request("daemon.status")
        far.close()
        with pytest.raises(DaemonUnreachable, match=r"connection lost .*\(no init; bye\)"):
            conn.next_notification(timeout=5)


def test_a_request_over_the_limit_is_refused_before_sending(
    scripted: Callable[[Answer], tuple[Connection, ScriptedDaemon]],
) -> None:
    conn, daemon = scripted(lambda request: [])
    with pytest.raises(errors.MessageTooLarge, match="over the daemon's"):
        conn.request("session.submit", {"text": "x" * (17 * 1024 * 1024)})
    assert daemon.seen == []
