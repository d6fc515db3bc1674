"""Running turns: one at a time per session, queued, cancellable.

A submitted turn waits in its session's queue; the session's worker runs them
in order. A run resolves the provider and the session's permission mode from
the configuration and the session as they are now (a turn in flight keeps what
it started with), binds the tools to the
session's workspace, runs the agent loop (see `turn.py`) and always
ends with `turn.finished` carrying the exit code, whatever fails on the way
(a model error, a store that cannot be written, a bug: each is an `error`
event naming the cause), and the session is idle again. Cancellation and
errors leave a history with no unanswered tool call, whose notes say what an
interrupted edit left on disk. A `session.compact` waits in the same queue,
so it never races a turn. After a tool-loop turn that ended normally, the
turn-close notes call (`turn_notes.py`) runs in the background: the turn has
already finished, and the next one does not wait for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import logging
import os
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from coding_harness.daemon.agent.loop import FAILED_STOPS, LoopResult
from coding_harness.daemon.agent.model_errors import ModelError
from coding_harness.daemon.agent.seams import JSONObject, ToolExecutor
from coding_harness.daemon.config.loader import ConfigCache
from coding_harness.daemon.config.profiles import ConfigError, ProviderProfile
from coding_harness.daemon.context.plan_book import PlanBook
from coding_harness.daemon.context.turn_notes import NotesJob, NoteTakers, wants_notes
from coding_harness.daemon.hooks.answers import HookHalt
from coding_harness.daemon.index.hub import IndexHub
from coding_harness.daemon.mcp.hub import McpHub
from coding_harness.daemon.providers.pool import ProviderPool
from coding_harness.daemon.security.secrets import collect_secrets
from coding_harness.daemon.sessions.events import turn_finished
from coding_harness.daemon.sessions.session import Session
from coding_harness.daemon.store.recorder import StepRecorder
from coding_harness.daemon.tools.context import ToolContext, TurnOutcome
from coding_harness.daemon.turns.assemble import TurnRequest, with_session_mode
from coding_harness.daemon.turns.interrupted import recover_writes
from coding_harness.daemon.turns.options import turn_kind
from coding_harness.daemon.turns.turn import Turn, TurnDeps, TurnState, compact_session, drive_turn
from coding_harness.protocol import exit_codes
from coding_harness.protocol.methods import EventKind

log = logging.getLogger(__name__)

CANCEL_NOTE = "interrupted: the user cancelled the turn before this call finished"
ERROR_NOTE = "not run: the turn ended with an error before this call finished"
HOOK_NOTE = "stopped: a hook ended the turn here (this call may have run already)"
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
        self._configs = configs
        self.plans = PlanBook()
        self.index = index
        self._deps = TurnDeps(
            pool=pool, build_tools=build_tools, plans=self.plans, mcp=mcp, index=index
        )
        self._lanes: dict[str, _Lane] = {}
        self._closing = False
        self.note_takers = NoteTakers(pool)

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

    def running(self) -> int:
        return sum(
            1
            for lane in self._lanes.values()
            if lane.current is not None or lane.waiting is not None
        )

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

    async def _compact(self, session: Session, request: TurnRequest) -> None:
        assert request.compaction is not None
        with session.running():
            try:
                config = self._configs.get(session.cwd)
                result = await compact_session(
                    self._deps, session, self._profile(session), config, request.id
                )
                request.compaction.set_result(result)
            except asyncio.CancelledError:
                request.compaction.cancel()
                raise
            except (ModelError, ConfigError) as exc:
                request.compaction.set_exception(exc)
            except Exception as exc:  # a bug: the caller hears of it, the worker logs it
                request.compaction.set_exception(exc)
                raise

    async def _run(self, session: Session, request: TurnRequest) -> None:
        self._lanes[session.id].begun = True
        if request.compaction is not None:
            await self._compact(session, request)
            return
        state = TurnState.start(session, request)
        turn: Turn | None = None
        try:
            with session.running():
                session.emit(EventKind.TURN_STARTED, {"turn": request.id, "text": request.text})
                turn = await self._drive(session, request, state)
        finally:  # idle first: whoever hears `turn.finished` may start the next turn
            session.emit(EventKind.TURN_FINISHED, state.finished_event(request.id))
            _save_finish(session, state.recorder, request.id, state.exit_code)
        if turn is not None and wants_notes(
            session, turn.config, state.route, state.exit_code, turn.profile
        ):
            self.note_takers.start(
                NotesJob(
                    session=session,
                    profile=turn.profile,
                    config=turn.config,
                    turn=request.id,
                    messages=state.turn_messages(),
                    turn_usage=dataclasses.replace(state.usage),
                )
            )

    async def _drive(self, session: Session, request: TurnRequest, state: TurnState) -> Turn | None:
        """Run the turn to its reply or its failure, leaving a history whose every tool
        call is answered; the turn, once its profile and config were resolved."""
        turn: Turn | None = None
        try:
            if session.store is not None:
                session.store.turn_started(session.id, request.id, request.text)
            state.recorder.save()
            state.profile = self._profile(session)
            config = with_session_mode(self._configs.get(session.cwd), session)
            turn = Turn(
                session=session,
                request=request,
                profile=state.profile,
                config=config,
                state=state,
            )
            result = await drive_turn(self._deps, turn)
            state.finish(result.reply, _exit_code(result, state.outcome), result.stopped)
        except asyncio.CancelledError:
            _repair(session, state, request.id, CANCEL_NOTE)
            state.finish("(cancelled)", exit_codes.INTERRUPTED)
        except HookHalt as halt:  # a hook refused the prompt, or stopped the turn
            if halt.prompt_refused:  # the refused prompt is not kept
                del state.working[state.first :]
            _repair(session, state, request.id, HOOK_NOTE)
            state.finish(halt.message, exit_codes.MODEL_ERROR)
            session.emit(EventKind.ERROR, {"message": halt.message, "kind": "hook"})
        except (ModelError, ConfigError) as exc:
            _repair(session, state, request.id, ERROR_NOTE)
            state.finish(_without_secrets(session, state, str(exc)), exit_codes.MODEL_ERROR)
            session.emit(EventKind.ERROR, {"message": state.reply, "kind": type(exc).__name__})
        except Exception as exc:  # the daemon's own failure: the turn still ends, and says why
            log.exception("turn %s failed", request.id)
            _repair(session, state, request.id, ERROR_NOTE)
            reply = _without_secrets(session, state, failure_text(exc))
            state.finish(reply, exit_codes.MODEL_ERROR)
            session.emit(EventKind.ERROR, {"message": reply, "kind": "internal"})
        finally:
            session.history = state.working[1:]
        return turn

    def _profile(self, session: Session) -> ProviderProfile:
        config = self._configs.get(session.cwd)
        profile = config.profile(session.provider)
        return dataclasses.replace(profile, model=session.model) if session.model else profile


def _without_secrets(session: Session, state: TurnState, text: str) -> str:
    """An error's text with the session's secrets redacted: a provider's error body may
    echo the key it was sent, and this text goes to every client and the store."""
    key_env = state.profile.api_key_env if state.profile is not None else None
    names = [key_env] if key_env else []
    return collect_secrets(names, session.key_env, os.environ).redact(text)


def _exit_code(result: LoopResult, outcome: TurnOutcome) -> int:
    """The edits' own outcome (a failed check, a rejection) first; then a loop that
    stopped short of the task is a failure (exit 1)."""
    code = outcome.exit_code()
    if code == 0 and result.stopped in FAILED_STOPS:
        return exit_codes.MODEL_ERROR
    return code


def failure_text(exc: BaseException) -> str:
    """One line for the people on the session when a turn fails for the daemon's reasons."""
    if isinstance(exc, UnicodeError):
        return f"invalid text: the turn ended because some text is not valid Unicode ({exc})"
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"disk full: the turn ended because a write failed ({exc})"
    return (
        f"internal error: the turn ended because of a fault in the daemon "
        f"({type(exc).__name__}: {exc}); the daemon log has the details"
    )


def _repair(session: Session, state: TurnState, turn: str, note: str) -> None:
    """Answer the calls the turn left open, saying what their writes left on disk."""
    events = ((event.kind, event.data) for event in session.events)
    for path in recover_writes(state.working, events, turn, session.cwd, note):
        state.outcome.record_change(path)


def _save_finish(session: Session, recorder: StepRecorder, turn: str, exit_code: int) -> None:
    """Store the turn's last step and its end; a failure here is logged, never raised."""
    try:
        recorder.save(force=True)
        if session.store is not None:
            state = "interrupted" if exit_code == exit_codes.INTERRUPTED else "finished"
            session.store.turn_finished(session.id, turn, exit_code, state)
    except Exception:
        log.exception("turn %s: its end could not be stored", turn)


def _refuse_queued(session: Session, request: TurnRequest, reply: str) -> None:
    """End a turn that never ran (a compaction job is cancelled instead)."""
    if request.compaction is not None:
        request.compaction.cancel()
        return
    session.emit(EventKind.TURN_FINISHED, turn_finished(request.id, exit_codes.INTERRUPTED, reply))
