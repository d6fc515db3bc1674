"""A page following a session keeps its event stream across a daemon restart.

A real `harness web` on a real daemon; a page's WebSocket follows a session; the
daemon is stopped (SIGTERM, and once `kill -9`) and the bridge dials a new one
(starting it, as every `harness` command does). A turn then run in the session
from a terminal reaches the page whole, each event once (client/web/stream.py's
`PageStream.relink`).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest

from tests.support import waiting
from tests.support.fake_model_server import Reply
from tests.support.processes import _alive, client, daemon_pid, events_until_finished
from tests.support.web_bridge import WebStack, login, web_stack

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def stack() -> Iterator[WebStack]:
    with web_stack() as built:
        yield built


def _new_session(stack: WebStack) -> str:
    with client(stack.sandbox.socket, "maker", approvals=False) as maker:
        made: str = maker.request("session.create", {"cwd": str(stack.sandbox.workspace)})[
            "session"
        ]
    return made


def _stop_daemon(stack: WebStack, how: signal.Signals) -> int:
    """Signal the daemon serving the socket; its pid, once it is gone."""
    pid = daemon_pid(stack.sandbox.socket)
    assert pid is not None and _alive(pid)
    os.kill(pid, how)
    waiting.wait_for(lambda: not _alive(pid), f"daemon {pid} to end")
    return pid


def _run_turn(stack: WebStack, session: str) -> list[dict[str, Any]]:
    """A turn in `session` from a terminal on the (new) daemon; its events."""
    with client(stack.sandbox.socket, "terminal", approvals=False) as terminal:
        terminal.request("session.attach", {"session": session})
        terminal.request("session.submit", {"session": session, "text": "say it"})
        return events_until_finished(terminal)


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "kill-9"])
def test_the_page_stream_gets_a_turn_run_after_a_daemon_restart(
    stack: WebStack, how: signal.Signals
) -> None:
    session = _new_session(stack)
    stack.model.add(Reply(content="after the restart"))
    web = login(stack)
    cookie = web.cookies["harness_web"]
    web.close()

    async def follow() -> tuple[list[dict[str, Any]], list[str], list[dict[str, Any]], int]:
        frames: list[dict[str, Any]] = []
        async with (
            aiohttp.ClientSession(cookies={"harness_web": cookie}) as http,
            http.ws_connect(
                f"{stack.base}s/{session}/events?since=0", headers={"Origin": stack.origin}
            ) as ws,
        ):

            async def until(kind: str, state: str | None = None) -> None:
                async with asyncio.timeout(waiting.TIMEOUT):
                    async for message in ws:
                        assert message.type == aiohttp.WSMsgType.TEXT, message
                        frames.append(json.loads(message.data))
                        if frames[-1]["type"] == kind and (
                            state is None or frames[-1].get("state") == state
                        ):
                            return
                raise AssertionError(f"the page's socket closed before {kind} {state}")

            await until("attached")
            old = await asyncio.to_thread(_stop_daemon, stack, how)
            await until("link", "live")
            new = daemon_pid(stack.sandbox.socket)
            terminal = await asyncio.to_thread(_run_turn, stack, session)
            while not any(f["type"] == "event" and f["kind"] == "turn.finished" for f in frames):
                await until("event")
        links = [f["state"] for f in frames if f["type"] == "link"]
        return frames, links, terminal, old if new is None or new == old else 0

    frames, links, terminal, same_pid = asyncio.run(follow())
    assert same_pid == 0, "the daemon answering after the restart is the old one"
    assert links == ["relinking", "live"]
    events = [f for f in frames if f["type"] == "event"]
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(set(seqs)), seqs  # each event once, in order
    turn = [e for e in events if e["seq"] >= terminal[0]["seq"]]
    assert [(e["seq"], e["kind"]) for e in turn] == [(e["seq"], e["kind"]) for e in terminal]
    text = "".join(e["data"]["text"] for e in turn if e["kind"] == "text.delta")
    assert text == "after the restart"
