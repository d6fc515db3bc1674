"""The bridge's link for requests: one connection shared by every page, dialled again
when the daemon restarted, and the approvals answered through it, each once.

An approval's answer is idempotent by its request id: the first answer the bridge
gets for an id is sent to the daemon, and every later one (the page retrying after
its network dropped, a second tab) waits for that same outcome instead of sending
again. The outcome says whether the answer counted: `counted: true` when the daemon
took it (also when the link broke after sending and the daemon, asked again, says
this bridge had resolved it), `counted: false` with who answered first otherwise.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from coding_harness.client.web.daemon_link import CLIENT_NAME, DaemonLink
from coding_harness.protocol import errors, methods
from coding_harness.protocol.client import DaemonUnreachable

ANSWERS_KEPT = 1000


class RequestsLink:
    def __init__(self) -> None:
        self._link: DaemonLink | None = None
        self._dialling = asyncio.Lock()
        self._answers: dict[str, asyncio.Future[dict[str, Any]]] = {}

    async def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """The daemon's answer; a link lost on the way is dialled again once."""
        for attempt in (1, 2):
            link = await self._linked()
            try:
                return await link.request(method, params)
            except DaemonUnreachable:
                if attempt == 2 or method == methods.APPROVAL_RESPOND:
                    raise
        raise AssertionError("unreachable")

    async def _linked(self) -> DaemonLink:
        async with self._dialling:
            if self._link is None or self._link.ended.is_set():
                self._link = await DaemonLink.open(approvals=True)
            return self._link

    async def answer(
        self, session: str, request: str, decision: str, reason: str
    ) -> dict[str, Any]:
        """The outcome of answering `request`, sent to the daemon at most once."""
        known = self._answers.get(request)
        if known is not None:
            outcome = dict(await asyncio.shield(known))
            outcome["repeated"] = True
            return outcome
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._answers[request] = future
        self._forget_old()
        try:
            outcome = await self._send(session, request, decision, reason)
        except asyncio.CancelledError:
            del self._answers[request]
            future.cancel()
            raise
        except Exception as exc:
            if isinstance(exc, DaemonUnreachable):  # not known to have reached it: may go again
                del self._answers[request]
            future.set_exception(exc)
            future.exception()  # retrieved: no warning when nobody else waits
            raise
        future.set_result(outcome)
        return outcome

    async def _send(self, session: str, request: str, decision: str, reason: str) -> dict[str, Any]:
        params: dict[str, Any] = {"session": session, "request": request, "decision": decision}
        if reason:
            params["reason"] = reason
        try:
            result = await self.call(methods.APPROVAL_RESPOND, params)
        except errors.ApprovalNotPending as exc:
            if _ours(exc.message):  # sent before the link broke: it did count
                return {"request": request, "counted": True, "decision": decision}
            return {"request": request, "counted": False, "message": exc.message}
        except errors.RpcError as exc:
            return {"request": request, "counted": False, "message": exc.message}
        return {"request": request, "counted": True, "decision": result.get("decision", decision)}

    def _forget_old(self) -> None:
        while len(self._answers) > ANSWERS_KEPT:
            oldest = next(iter(self._answers))
            if not self._answers[oldest].done():
                return
            del self._answers[oldest]

    async def close(self) -> None:
        if self._link is not None:
            await self._link.close()


def _ours(message: str) -> bool:
    return f"({CLIENT_NAME}, pid {os.getpid()})" in message
