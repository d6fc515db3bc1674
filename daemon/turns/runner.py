"""The queue of turns: one at a time per session, queued, cancellable.

A submitted turn waits in its session's queue; the session's worker takes the
jobs in order and runs each (`worker.py`: a turn always ends with
`turn.finished`, and the session is idle again). A turn starts once the
submit's answer is out; a turn cancelled before it starts, or queued when its
session is closed or the daemon stops, ends unstarted with exit code 130. A
`session.compact` waits in the same queue, so it never races a turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from coding_harness.daemon.agent.seams import JSONObject, ToolExecutor
from coding_harness.daemon.config.loader import ConfigCache
from coding_harness.daemon.context.notes_schedule import NoteTakers
from coding_harness.daemon.context.plan_book import PlanBook
from coding_harness.daemon.index.hub import IndexHub
from coding_harness.daemon.mcp.hub import McpHub
from coding_harness.daemon.providers.pool import ProviderPool
from coding_harness.daemon.sessions.events import turn_finished
from coding_harness.daemon.sessions.session import Session
from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.turns.assemble import TurnRequest
from coding_harness.daemon.turns.options import turn_kind
from coding_harness.daemon.turns.state import TurnDeps
from coding_harness.daemon.turns.worker import TurnWorker
from coding_harness.protocol import exit_codes
from coding_harness.protocol.methods import EventKind

log = logging.getLogger(__name__)

# Seconds a submitted turn waits for its go-ahead (the submit answered) at most.
RELEASE_WAIT = 5.0


@dataclass(kw_only=True, slots=True)
class _Lane:
    queue: asyncio.Queue[TurnRequest | None]
    worker: asyncio.Task[None]
    current: asyncio.Task[None] | None = None
    begun: bool = False  # whether `current` has taken its first step
    waiting: TurnRequest | None = None  # taken from the queue, waiting for its go-ahead


class TurnRunner:
    def __init__(
        self,
        *,
        configs: ConfigCache,
        pool: ProviderPool,
        build_tools: Callable[[ToolContext], ToolExecutor],
        mcp: McpHub | None = None,
        index: IndexHub | None = None,
    ) -> None:
        self.plans = PlanBook()
        self.index = index
        self._deps = TurnDeps(
            pool=pool, build_tools=build_tools, plans=self.plans, mcp=mcp, index=index
        )
        self._lanes: dict[str, _Lane] = {}
        self._closing = False
        self.note_takers = NoteTakers(pool)
        self.facts = pool.facts  # what the servers told: windows, models without tools
        self.gates = pool.gates  # the requests waiting for each model (model_gate.py)
        self._worker = TurnWorker(configs=configs, deps=self._deps, note_takers=self.note_takers)

    def submit(
        self,
        session: Session,
        text: str,
        *,
        auto_approve: bool,
        dry_run: bool,
        options: Mapping[str, Any] | None = None,
        release: Callable[[Callable[[], None]], None] | None = None,
    ) -> JSONObject:
        """Queue a turn; `options` may force a route, ask for a summary or load a skill.
        `release` is handed the turn's go-ahead, to call once the submit's answer is
        out (`Connection.on_answer`): the turn's first steps, which hold the event
        loop for milliseconds, would otherwise delay that answer. Without it the turn
        may start at once."""
        request = TurnRequest(
            id=f"t-{secrets.token_hex(4)}",
            text=text,
            auto_approve=auto_approve,
            dry_run=dry_run,
            kind=turn_kind(options or {}, session.cwd),
        )
        if release is None:
            request.released.set()
        else:
            release(request.released.set)
        return self._enqueue(session, request)

    def compact(self, session: Session) -> asyncio.Future[JSONObject]:
        """Queue a compaction of the session's history; the future has its result."""
        done: asyncio.Future[JSONObject] = asyncio.get_running_loop().create_future()
        request = TurnRequest(id=f"c-{secrets.token_hex(4)}", text="", compaction=done)
        request.released.set()
        self._enqueue(session, request)
        return done

    def _enqueue(self, session: Session, request: TurnRequest) -> JSONObject:
        lane = self._lane(session)
        busy = lane.current is not None or lane.waiting is not None or not lane.queue.empty()
        if not busy:  # nothing runs before it: what the index shows from now on is current
            request.map_fresh_since = time.monotonic()
        lane.queue.put_nowait(request)
        if busy and request.compaction is None:
            session.emit(
                EventKind.TURN_QUEUED, {"turn": request.id, "position": lane.queue.qsize()}
            )
        return {"turn": request.id, "queued": busy}

    def cancel(self, session: Session) -> bool:
        lane = self._lanes.get(session.id)
        if lane is not None and lane.waiting is not None:  # about to start: it will not
            lane.waiting.withdrawn = True
            return True
        if lane is None or lane.current is None or lane.current.done():
            return False
        lane.current.cancel()
        return True

    def forget(self, session: Session) -> None:
        """A closed session: its queued turns end unstarted, its running turn and its
        worker are cancelled, and the notes lines its turns kept are dropped."""
        lane = self._lanes.pop(session.id, None)
        if lane is not None:
            while not lane.queue.empty():
                waiting = lane.queue.get_nowait()
                if waiting is not None:
                    _refuse_queued(session, waiting, "(not started: the session was closed)")
            if lane.current is not None:
                lane.current.cancel()  # it still ends with turn.finished
            lane.queue.put_nowait(None)  # the worker ends once that is done
        self._deps.notes.pop(session.id, None)
        self._deps.window_told.discard(session.id)

    def running(self) -> int:
        return sum(
            1
            for lane in self._lanes.values()
            if lane.current is not None or lane.waiting is not None
        )

    @property
    def closing(self) -> bool:
        """Whether the daemon stops: queued turns no longer start (`stop_taking`)."""
        return self._closing

    def stop_taking(self) -> None:
        """From now on queued turns are not started; each finishes with exit code 130."""
        self._closing = True

    async def close(self, drain_seconds: float = 0.0) -> None:
        """Let running turns finish for up to `drain_seconds`, then cancel them."""
        currents = self._currents()
        if currents and drain_seconds > 0:
            log.info("waiting up to %.0f s for %d running turn(s)", drain_seconds, len(currents))
            await asyncio.wait(currents, timeout=drain_seconds)
        for task in self._currents():
            task.cancel()
        if self._currents():
            await asyncio.wait(self._currents(), timeout=5)
        for lane in self._lanes.values():
            lane.worker.cancel()
        self.note_takers.cancel()
        # The store closes next: a cancelled notes call must not write after it.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.note_takers.settled(), timeout=5)

    def kept_notes(self, session: Session) -> list[str] | None:
        """The notes section's lines the session's turns put in their prompt, once its
        first turn read them (None before: the next turn reads the store)."""
        kept = self._deps.notes.get(session.id)
        return None if kept is None else kept[1]

    def forget_notes(self, project: str) -> None:
        """A project's notes changed: its sessions put them in their next prompt afresh."""
        self._deps.forget_notes(project)

    def _currents(self) -> list[asyncio.Task[None]]:
        return [
            lane.current
            for lane in self._lanes.values()
            if lane.current is not None and not lane.current.done()
        ]

    def _lane(self, session: Session) -> _Lane:
        lane = self._lanes.get(session.id)
        if lane is None:
            queue: asyncio.Queue[TurnRequest | None] = asyncio.Queue()
            worker = asyncio.create_task(self._work(session, queue), name=f"turns-{session.id}")
            lane = self._lanes[session.id] = _Lane(queue=queue, worker=worker)
        return lane

    async def _work(self, session: Session, queue: asyncio.Queue[TurnRequest | None]) -> None:
        lane = self._lanes[session.id]
        while True:
            request = await queue.get()
            if request is None:  # the session was closed (`forget`)
                return
            if not await self._go_ahead(session, lane, request):
                continue
            if self._closing:
                _refuse_queued(session, request, "(not started: the daemon is stopping)")
                continue
            lane.current = asyncio.create_task(self._run(session, request), name=request.id)
            lane.begun = False
            try:
                await asyncio.shield(lane.current)
            except asyncio.CancelledError:
                if not lane.current.done():
                    raise
                if not lane.begun:  # cancelled before its first step: it still ends
                    _refuse_queued(session, request, "(cancelled)")
            except Exception:
                log.exception("turn %s failed", request.id)
            finally:
                lane.current = None

    async def _go_ahead(self, session: Session, lane: _Lane, request: TurnRequest) -> bool:
        """Wait until the submit's answer is out (never long); False, the turn ended
        unstarted, when the session was closed or the turn cancelled meanwhile."""
        if not request.released.is_set():
            lane.waiting = request
            try:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(request.released.wait(), RELEASE_WAIT)
            except asyncio.CancelledError:  # the daemon stops
                _refuse_queued(session, request, "(not started: the daemon is stopping)")
                raise
            finally:
                lane.waiting = None
        if self._lanes.get(session.id) is not lane:  # closed: `forget` left this one to us
            _refuse_queued(session, request, "(not started: the session was closed)")
            return False
        if request.withdrawn:
            _refuse_queued(session, request, "(cancelled)")
            return False
        return True

    async def _run(self, session: Session, request: TurnRequest) -> None:
        self._lanes[session.id].begun = True
        await self._worker.run(session, request)


def _refuse_queued(session: Session, request: TurnRequest, reply: str) -> None:
    """End a turn that never ran (a compaction job is cancelled instead)."""
    if request.compaction is not None:
        request.compaction.cancel()
        return
    session.emit(EventKind.TURN_FINISHED, turn_finished(request.id, exit_codes.INTERRUPTED, reply))
