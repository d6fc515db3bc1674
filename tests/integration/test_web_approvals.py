"""Approvals and the stream through `harness web`, against terminals on the same daemon.

A turn started in a terminal is approved from the web API, and one started from
the web API is approved in a terminal; an answer sent twice (a phone retrying
after its network dropped) reaches the daemon once and says whether it counted;
the event stream replays from the page's last seq. One bridge serves the module.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import aiohttp
import httpx
import pytest

from tests.integration.conftest import BUGGY, FIXED
from tests.support import waiting
from tests.support.fake_model_server import Reply, tool_call
from tests.support.processes import client, events_until_finished, wait_for_event
from tests.support.web_bridge import WebStack, login, web_stack

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def stack() -> Iterator[WebStack]:
    with web_stack() as built:
        yield built


@pytest.fixture
def web(stack: WebStack) -> Iterator[httpx.Client]:
    (stack.sandbox.workspace / "calc.py").write_text(BUGGY)
    client = login(stack)
    client.headers["Origin"] = stack.origin
    yield client
    client.close()


def _script_edit(stack: WebStack) -> None:
    stack.model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="Fixed it."),
    )


def _pending(web: httpx.Client, session: str) -> str:
    """The id of the approval the session waits for, read as the page reads it."""
    found: list[str] = []

    def asked() -> bool:
        found[:] = [
            e["data"]["request"]
            for e in _events(web, session, until="approval.requested")
            if e["kind"] == "approval.requested"
        ]
        return bool(found)

    waiting.wait_for(asked, "the approval on the page's stream")
    return found[-1]


def _events(
    web: httpx.Client, session: str, *, since: int = 0, until: str, within: float = 20
) -> list[dict[str, Any]]:
    """The page's event stream from `since`, until an event of kind `until` (or `within` s)."""
    base = str(web.base_url)
    cookie = web.cookies["harness_web"]
    origin = web.headers["Origin"]

    async def read() -> list[dict[str, Any]]:
        seen: list[dict[str, Any]] = []
        async with (
            aiohttp.ClientSession(cookies={"harness_web": cookie}) as http,
            http.ws_connect(
                f"{base}s/{session}/events?since={since}", headers={"Origin": origin}
            ) as ws,
        ):
            try:
                async with asyncio.timeout(within):
                    async for message in ws:
                        frame = json.loads(message.data)
                        if frame["type"] == "event":
                            seen.append(frame)
                            if frame["kind"] == until:
                                break
            except TimeoutError:
                pass
        return seen

    return asyncio.run(read())


def test_a_terminal_turn_is_approved_from_the_web(stack: WebStack, web: httpx.Client) -> None:
    _script_edit(stack)
    oneshot = subprocess.Popen(
        [sys.executable, "-m", "coding_harness.client", "-p", "fix calc.py"],
        env=stack.sandbox.env,
        cwd=stack.sandbox.workspace,
        stdin=subprocess.PIPE,  # open and silent: a person who has not typed yet
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        session = waiting.wait_for(
            lambda: [
                s["session"]
                for s in web.get("/api/sessions").json()["sessions"]
                if s["state"] == "waiting"
            ],
            "the one-shot's question",
        )[0]
        request = _pending(web, session)
        outcome = web.post(
            f"/api/s/{session}/approve", json={"request": request, "decision": "yes"}
        ).json()
        _out, err = oneshot.communicate(timeout=60)
    finally:
        if oneshot.poll() is None:
            oneshot.kill()
            oneshot.communicate()
    assert outcome == {"request": request, "counted": True, "decision": "yes"}
    assert oneshot.returncode == 0, err
    assert (stack.sandbox.workspace / "calc.py").read_text() == FIXED
    assert "approved in the browser (harness web, pid " in err


def test_a_web_turn_is_approved_in_a_terminal_and_the_late_web_answer_does_not_count(
    stack: WebStack, web: httpx.Client
) -> None:
    _script_edit(stack)
    with client(stack.sandbox.socket, "harness-repl") as terminal:
        session = terminal.request("session.create", {"cwd": str(stack.sandbox.workspace)})
        session_id = session["session"]
        terminal.request("session.attach", {"session": session_id})
        started = web.post(f"/api/s/{session_id}/submit", json={"text": "fix calc.py"})
        assert started.status_code == 200 and started.json()["turn"]
        asked = wait_for_event(terminal, "approval.requested")
        request = asked["data"]["request"]
        terminal.request(
            "approval.respond", {"session": session_id, "request": request, "decision": "yes"}
        )
        events = events_until_finished(terminal)
    assert events[-1]["data"]["exit_code"] == 0
    assert (stack.sandbox.workspace / "calc.py").read_text() == FIXED
    seen = _events(web, session_id, until="turn.finished")
    resolved = [e for e in seen if e["kind"] == "approval.resolved"]
    assert [(e["data"]["request"], e["data"]["by"]["name"]) for e in resolved] == [
        (request, "harness-repl")
    ]
    late = web.post(f"/api/s/{session_id}/approve", json={"request": request, "decision": "no"})
    assert late.status_code == 200
    assert late.json()["counted"] is False and "already resolved by" in late.json()["message"]


def test_an_answer_sent_twice_reaches_the_daemon_once(stack: WebStack, web: httpx.Client) -> None:
    _script_edit(stack)
    with client(stack.sandbox.socket, "watcher", approvals=False) as watcher:
        session_id = watcher.request("session.create", {"cwd": str(stack.sandbox.workspace)})[
            "session"
        ]
        watcher.request("session.attach", {"session": session_id})
        web.post(f"/api/s/{session_id}/submit", json={"text": "fix calc.py"})
        request = wait_for_event(watcher, "approval.requested")["data"]["request"]
        body = {"request": request, "decision": "yes"}
        first = web.post(f"/api/s/{session_id}/approve", json=body).json()
        again = web.post(f"/api/s/{session_id}/approve", json=body).json()
        events = events_until_finished(watcher)
    assert first == {"request": request, "counted": True, "decision": "yes"}
    assert again == {**first, "repeated": True}
    assert [e["kind"] for e in events].count("approval.resolved") == 1
    assert (stack.sandbox.workspace / "calc.py").read_text() == FIXED


def test_the_stream_replays_from_the_last_seq_the_page_saw(
    stack: WebStack, web: httpx.Client
) -> None:
    stack.model.add(Reply(content="one **two** three"))
    session_id = web_session(stack)
    web.post(f"/api/s/{session_id}/submit", json={"text": "say it"})
    whole = _events(web, session_id, until="turn.finished")
    text = "".join(e["data"]["text"] for e in whole if e["kind"] == "text.delta")
    assert text == "one **two** three"
    middle = whole[len(whole) // 2]["seq"]
    rest = _events(web, session_id, since=middle, until="turn.finished")
    assert [e["seq"] for e in rest] == [e["seq"] for e in whole if e["seq"] > middle]


def test_cancel_mode_and_undo_reach_the_daemon(stack: WebStack, web: httpx.Client) -> None:
    session_id = web_session(stack)
    assert web.post(f"/api/s/{session_id}/cancel").json() == {"cancelled": False}
    mode = web.post(f"/api/s/{session_id}/mode", json={"mode": "read-only"})
    assert mode.json() == {"mode": "read-only"}
    listed = web.get("/api/sessions").json()["sessions"]
    assert [s["mode"] for s in listed if s["session"] == session_id] == ["read-only"]
    assert web.post(f"/api/s/{session_id}/submit", json={"text": "/mode ask"}).json() == {
        "mode": "ask"
    }
    nothing = web.post(f"/api/s/{session_id}/undo")
    assert nothing.status_code == 400 and nothing.json()["error"]
    unknown = web.post(f"/api/s/{session_id}/submit", json={"text": "/model x"})
    assert unknown.status_code == 400 and "terminal command" in unknown.json()["error"]


def web_session(stack: WebStack) -> str:
    with client(stack.sandbox.socket, "maker", approvals=False) as maker:
        made: str = maker.request("session.create", {"cwd": str(stack.sandbox.workspace)})[
            "session"
        ]
    return made
