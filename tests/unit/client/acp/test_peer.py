"""The bridge's JSON-RPC peer over a socket pair: requests both ways, cancellation,
answers in order, bad input."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from typing import Any

from coding_harness.client.acp.peer import Peer, PeerClosed, RpcFailure, ThenAnswer


async def pair(dispatch: Any) -> tuple[Peer, asyncio.StreamReader, asyncio.StreamWriter]:
    """A peer on one end of a socket pair; the raw other end for the test."""
    ours, theirs = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=ours)
    raw_reader, raw_writer = await asyncio.open_connection(sock=theirs)
    return Peer(reader, writer, dispatch, name="test").start(), raw_reader, raw_writer


async def read(reader: asyncio.StreamReader) -> dict[str, Any]:
    line = await asyncio.wait_for(reader.readline(), 5)
    message: dict[str, Any] = json.loads(line)
    return message


async def shut(writer: asyncio.StreamWriter) -> None:
    writer.close()
    with contextlib.suppress(ConnectionError):
        await writer.wait_closed()


def send(writer: asyncio.StreamWriter, message: object) -> None:
    writer.write((message if isinstance(message, str) else json.dumps(message)).encode() + b"\n")


def test_an_incoming_cancel_request_stops_the_handler_with_32800() -> None:
    started = asyncio.Event()

    async def slow(method: str, params: Any, note: bool) -> Any:
        started.set()
        await asyncio.sleep(60)

    async def scenario() -> dict[str, Any]:
        peer, reader, writer = await pair(slow)
        send(writer, {"jsonrpc": "2.0", "id": 7, "method": "slow"})
        await asyncio.wait_for(started.wait(), 5)
        send(writer, {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 7}})
        answer = await read(reader)
        await peer.close()
        await shut(writer)
        return answer

    answer = asyncio.run(scenario())
    assert answer["id"] == 7 and answer["error"]["code"] == -32800


def test_withdrawing_a_request_sends_cancel_request_and_a_late_answer_is_dropped() -> None:
    async def nothing(method: str, params: Any, note: bool) -> Any:
        return None

    async def scenario() -> tuple[dict[str, Any], dict[str, Any], bool]:
        peer, reader, writer = await pair(nothing)
        request_id, future = peer.start_request("session/request_permission", {"x": 1})
        asked = await read(reader)
        await peer.cancel_outgoing(request_id)
        withdrawn = await read(reader)
        send(writer, {"jsonrpc": "2.0", "id": request_id, "result": {}})  # too late
        send(writer, {"jsonrpc": "2.0", "id": "other", "method": "ping"})
        pong = await read(reader)  # the late answer got no reply: the next line is ping's
        await peer.close()
        await shut(writer)
        return asked, withdrawn, future.cancelled() and pong["id"] == "other"

    asked, withdrawn, dropped = asyncio.run(scenario())
    assert withdrawn == {
        "jsonrpc": "2.0",
        "method": "$/cancel_request",
        "params": {"requestId": asked["id"]},
    }
    assert dropped


def test_errors_come_back_as_rpc_failures_and_a_closed_side_fails_waiting_requests() -> None:
    async def nothing(method: str, params: Any, note: bool) -> Any:
        return None

    async def scenario() -> tuple[RpcFailure, BaseException]:
        peer, reader, writer = await pair(nothing)
        refused = asyncio.ensure_future(peer.request("x"))
        asked = await read(reader)
        send(
            writer,
            {"jsonrpc": "2.0", "id": asked["id"], "error": {"code": -32010, "message": "no"}},
        )
        try:
            await refused
        except RpcFailure as failure:
            first = failure
        waiting = asyncio.ensure_future(peer.request("y"))
        await read(reader)
        writer.close()
        try:
            await asyncio.wait_for(waiting, 5)
        except PeerClosed as exc:
            second: BaseException = exc
        await peer.close()
        await shut(writer)
        return first, second

    first, second = asyncio.run(scenario())
    assert (first.code, first.message) == (-32010, "no")
    assert isinstance(second, PeerClosed)


def test_bad_lines_get_errors_and_a_follow_up_runs_after_its_answer() -> None:
    order: list[str] = []

    async def dispatch(method: str, params: Any, note: bool) -> Any:
        if method == "boom":
            raise ValueError("bug")

        async def after() -> None:
            order.append("follow-up")

        return ThenAnswer({"ok": True}, after)

    async def scenario() -> list[dict[str, Any]]:
        peer, reader, writer = await pair(dispatch)
        send(writer, "not json")
        send(writer, "[1, 2]")
        send(writer, {"jsonrpc": "2.0", "id": 1, "method": "boom"})
        send(writer, {"jsonrpc": "2.0", "id": 2, "method": "fine"})
        got = [await read(reader) for _ in range(4)]
        await peer.close()
        await shut(writer)
        return got

    got = asyncio.run(scenario())
    assert sorted(m["error"]["code"] for m in got if m["id"] is None) == [-32700, -32600]
    assert [m["error"]["code"] for m in got if m["id"] == 1] == [-32603]
    assert [m["result"] for m in got if m["id"] == 2] == [{"ok": True}]
    assert order == ["follow-up"]
