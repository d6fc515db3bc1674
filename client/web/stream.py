"""A session's events to one page, over a WebSocket: replayed, then live.

Each open page has a daemon connection of its own, attached to its session with
the last `seq` the page saw (`?since=N`; 0 for a new page: the whole stream is
replayed), so the daemon's own replay decides what the page missed. When that
connection drops (the daemon restarted), the bridge dials again (starting a
daemon as every `harness` command does) and attaches from the last `seq` it
passed on; when the page's socket drops (a phone locked its screen), the page
opens a new one with its own last `seq`. Either way every event arrives once.

Messages to the page are JSON: `{type: "event", seq, kind, data, at}`,
`{type: "attached", session: summary, replayed}` once the replay is out,
`{type: "link", state: "relinking" | "live"}` around a daemon restart, and
`{type: "gone", message}` when the session no longer exists (then the socket
closes with 4404 and the page stops trying). The page sends nothing on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

from aiohttp import WSMsgType, web

from coding_harness.client.web.api import session_id, summary
from coding_harness.client.web.daemon_link import DaemonLink
from coding_harness.protocol import errors, methods
from coding_harness.protocol.client import DaemonUnreachable

RELINK_SECONDS = 20.0
BEHIND = 20_000  # events waiting for a page that stopped reading: it reconnects instead
GONE = 4404
RESTART = 1012


class PageStream:
    def __init__(self, ws: web.WebSocketResponse, session: str, since: int) -> None:
        self.ws, self.session, self.last_seq = ws, session, since
        self.outbox: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.link: DaemonLink | None = None

    def _on_event(self, params: dict[str, Any]) -> None:
        seq = params.get("seq")
        if params.get("session") != self.session or not isinstance(seq, int):
            return
        if seq <= self.last_seq:
            return  # already passed on (a replay overlapping what was live)
        self.last_seq = seq
        if self.outbox.qsize() > BEHIND:
            self.outbox.put_nowait(None)  # stop: the page comes back with its last seq
            return
        self.outbox.put_nowait({"type": "event", **{k: params.get(k) for k in _FIELDS}})

    async def attach(self) -> None:
        """A new daemon link attached from `last_seq`; raises what stops the stream."""
        if self.link is not None:
            await self.link.close()
        self.link = await DaemonLink.open(approvals=True, on_event=self._on_event)
        result = await self.link.request(
            methods.SESSION_ATTACH, {"session": self.session, "since_seq": self.last_seq}
        )
        self.outbox.put_nowait(
            {"type": "attached", "session": summary(result), "replayed": result.get("replayed")}
        )

    async def relink(self) -> bool:
        """Dial the daemon again until RELINK_SECONDS pass; whether it worked."""
        deadline = time.monotonic() + RELINK_SECONDS
        pause = 0.05
        while time.monotonic() < deadline:
            with contextlib.suppress(DaemonUnreachable):
                await self.attach()
                return True
            await asyncio.sleep(pause)
            pause = min(1.0, pause * 2)
        return False

    async def pump(self) -> None:
        """Send what the outbox holds until a None (or the socket closes)."""
        while True:
            message = await self.outbox.get()
            if message is None:
                await self.ws.close(code=RESTART, message=b"behind: reconnect")
                return
            await self.ws.send_str(json.dumps(message))

    async def watch_daemon(self) -> None:
        """Relink each time the daemon's connection ends, until it cannot be."""
        while True:
            assert self.link is not None
            await self.link.ended.wait()
            self.outbox.put_nowait({"type": "link", "state": "relinking"})
            if not await self.relink():
                self.outbox.put_nowait(None)
                return
            self.outbox.put_nowait({"type": "link", "state": "live"})

    async def close(self) -> None:
        if self.link is not None:
            await self.link.close()


_FIELDS = ("seq", "kind", "data", "at")


async def events(request: web.Request) -> web.StreamResponse:
    session = session_id(request)
    try:
        since = max(0, int(request.query.get("since", "0")))
    except ValueError:
        since = 0
    ws = web.WebSocketResponse(heartbeat=20.0, max_msg_size=4096)
    await ws.prepare(request)
    stream = PageStream(ws, session, since)
    try:
        await stream.attach()
    except errors.SessionNotFound as exc:
        await ws.send_str(json.dumps({"type": "gone", "message": exc.message}))
        await stream.close()
        await ws.close(code=GONE, message=b"no such session")
        return ws
    except (DaemonUnreachable, errors.RpcError):
        await stream.close()
        await ws.close(code=RESTART, message=b"daemon unreachable")
        return ws
    tasks = [
        asyncio.create_task(stream.pump()),
        asyncio.create_task(stream.watch_daemon()),
        asyncio.create_task(_drain(ws)),
    ]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await stream.close()
        await ws.close()
    return ws


async def _drain(ws: web.WebSocketResponse) -> None:
    """Read (and ignore) what the page sends, until its socket closes."""
    async for message in ws:
        if message.type in (WSMsgType.ERROR, WSMsgType.CLOSE):
            return
