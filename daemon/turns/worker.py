"""What a session's worker does with each job it takes from the queue (`runner.py`).

A turn: `turn.started`, then the drive (`drive.py`) with the provider and the
session's permission mode resolved from the configuration and the session as
they are now (a turn in flight keeps what it started with), and always
`turn.finished` carrying the exit code, whatever fails on the way (a model
error, a hook that halts it, a store that cannot be written, a bug: each is
an `error` event naming the cause, its text without the session's secrets).
Cancellation and errors leave a history with no unanswered tool call, whose
notes say what an interrupted edit left on disk. After a tool-loop turn that
ended normally the turn-close notes call (`turn_notes.py`) starts in the
background: the turn has already finished, and the next one does not wait; on
a local server it waits until the session is idle, and gives way to a turn
that starts (`notes_schedule.py`).
A compaction job answers its future instead.
"""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import logging
import os
from dataclasses import dataclass

from coding_harness.daemon.agent.loop import FAILED_STOPS, LoopResult
from coding_harness.daemon.agent.model_errors import ModelError
from coding_harness.daemon.config.loader import ConfigCache
from coding_harness.daemon.config.profiles import ConfigError, ProviderProfile
from coding_harness.daemon.context.notes_schedule import NoteTakers
from coding_harness.daemon.context.turn_notes import NotesJob, wants_notes
from coding_harness.daemon.context.window_fit import PromptTooLarge
from coding_harness.daemon.hooks.answers import HookHalt
from coding_harness.daemon.security.secrets import collect_secrets
from coding_harness.daemon.sessions.session import Session
from coding_harness.daemon.store.recorder import StepRecorder
from coding_harness.daemon.tools.context import TurnOutcome
from coding_harness.daemon.turns.assemble import TurnRequest, with_session_mode
from coding_harness.daemon.turns.drive import compact_session, drive_turn
from coding_harness.daemon.turns.interrupted import recover_writes
from coding_harness.daemon.turns.state import Turn, TurnDeps, TurnState
from coding_harness.protocol import exit_codes
from coding_harness.protocol.methods import EventKind

log = logging.getLogger(__name__)

CANCEL_NOTE = "interrupted: the user cancelled the turn before this call finished"
ERROR_NOTE = "not run: the turn ended with an error before this call finished"
HOOK_NOTE = "stopped: a hook ended the turn here (this call may have run already)"


@dataclass(kw_only=True, slots=True)
class TurnWorker:
    """Runs one job with the daemon-wide parts; the queue decides when."""

    configs: ConfigCache
    deps: TurnDeps
    note_takers: NoteTakers

    async def run(self, session: Session, request: TurnRequest) -> None:
        """The job: a compaction, or a turn from `turn.started` to `turn.finished`, then
        its turn-close notes in the background when it wants them."""
        self.note_takers.turn_started(session.id)  # a local server's notes call gives way
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
        self.note_takers.idle(session.id)

    async def _compact(self, session: Session, request: TurnRequest) -> None:
        assert request.compaction is not None
        with session.running():
            try:
                config = self.configs.get(session.cwd)
                result = await compact_session(
                    self.deps, session, self._profile(session), config, request.id
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

    async def _drive(self, session: Session, request: TurnRequest, state: TurnState) -> Turn | None:
        """Run the turn to its reply or its failure, leaving a history whose every tool
        call is answered; the turn, once its profile and config were resolved."""
        turn: Turn | None = None
        try:
            if session.store is not None:
                session.store.turn_started(session.id, request.id, request.text)
            state.recorder.save()
            state.profile = self._profile(session)
            config = with_session_mode(self.configs.get(session.cwd), session)
            turn = Turn(
                session=session,
                request=request,
                profile=state.profile,
                config=config,
                state=state,
            )
            result = await drive_turn(self.deps, turn)
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
        except PromptTooLarge as refused:  # never sent, and not kept: later turns stay small
            del state.working[state.first :]
            _repair(session, state, request.id, ERROR_NOTE)
            state.finish(str(refused), exit_codes.MODEL_ERROR)
            session.emit(EventKind.ERROR, {"message": str(refused), "kind": "prompt_too_large"})
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
        config = self.configs.get(session.cwd)
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
