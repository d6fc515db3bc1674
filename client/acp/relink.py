"""Keeping the bridge linked to the daemon across a daemon restart.

When the daemon's connection ends (it was restarted, upgraded, or crashed), the
bridge connects again (starting a daemon if none answers, as every `harness`
command does) and attaches to each open session with the last `seq` it
handled, so the events it missed are replayed and nothing is lost: a turn the
restart interrupted ends as `cancelled`, and the editor's prompt with it (also when
the daemon died before it recorded that turn: the session is idle after the replay,
so nothing will finish it).
Requests from the editor wait for the new link. When no daemon can be reached,
the prompts still waiting fail with what to do.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from acp import helpers

from coding_harness.client.acp.bridge import DAEMON_GONE, RELINK_WAIT, Bridge
from coding_harness.client.acp.peer import INTERNAL_ERROR, Peer, RpcFailure
from coding_harness.protocol import methods
from coding_harness.protocol.client import DaemonUnreachable

log = logging.getLogger(__name__)


async def keep_linked(bridge: Bridge, connect: Callable[[], Awaitable[Peer]]) -> None:
    """Redo the daemon link each time it is lost, until it cannot be redone."""
    while bridge.daemon is not None:
        await bridge.daemon.ended.wait()
        log.info("the daemon connection ended; linking again")
        bridge.linked.clear()
        lost = bridge.daemon
        await lost.close()
        try:
            bridge.daemon = await asyncio.wait_for(connect(), RELINK_WAIT)
        except (DaemonUnreachable, TimeoutError) as exc:
            log.warning("%s (%s)", DAEMON_GONE, exc)
            bridge.daemon = lost  # closed: every request now fails with DAEMON_GONE
            bridge.turns.fail_all(RpcFailure(INTERNAL_ERROR, DAEMON_GONE))
            bridge.linked.set()
            return
        log.info("linked to the daemon again; replaying what was missed")
        bridge.linked.set()
        await _attach_again(bridge)


async def _attach_again(bridge: Bridge) -> None:
    for view in list(bridge.views.values()):
        params = {"session": view.id, "since_seq": view.last_seq}
        try:
            summary = await bridge.ask_daemon(methods.SESSION_ATTACH, params)
        except RpcFailure as failure:
            bridge.turns.end_lost(view.id)
            log.warning("session %s could not be attached again: %s", view.id, failure.message)
            note = f"\n[this session is gone from the daemon: {failure.message}]\n"
            await bridge.send_updates(view.id, [helpers.update_agent_thought_text(note)])
            continue
        assert bridge.daemon is not None
        await bridge.daemon.notifications_handled()  # the replayed events are out
        # nothing runs (idle, or its last turn failed): a turn not replayed as finished is lost
        if summary.get("state") in ("idle", "failed"):
            bridge.turns.end_lost(view.id)
