"""A turn's state: what it runs with and what it holds from its start to `turn.finished`.

`TurnDeps` are the daemon-wide parts every turn uses (the provider pool, the
tool builder, the plans, MCP and the code index) and the notes section each
session read at its first turn; `Turn` is one turn and the profile and config
it resolved when it started; `TurnState` its working list of messages and its
tallies (usage, the files it changed, its reply and exit code), which become
its `turn.finished` event. The drive that fills them is `drive.py`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from coding_harness.daemon.agent.loop import StopReason
from coding_harness.daemon.agent.seams import JSONObject, ToolExecutor, Usage
from coding_harness.daemon.config.loader import Config
from coding_harness.daemon.config.profiles import ProviderProfile
from coding_harness.daemon.context.plan_book import PlanBook
from coding_harness.daemon.index.hub import IndexHub
from coding_harness.daemon.mcp.hub import McpHub
from coding_harness.daemon.providers.pool import ProviderPool
from coding_harness.daemon.sessions.events import turn_finished
from coding_harness.daemon.sessions.session import Session
from coding_harness.daemon.store.recorder import StepRecorder
from coding_harness.daemon.tools.context import ToolContext, TurnOutcome
from coding_harness.daemon.turns.assemble import TurnRequest
from coding_harness.daemon.usage.cost import cost_usd
from coding_harness.protocol import exit_codes


@dataclass(kw_only=True, slots=True)
class TurnDeps:
    """The daemon-wide parts every turn uses."""

    pool: ProviderPool
    build_tools: Callable[[ToolContext], ToolExecutor]
    plans: PlanBook
    # The daemon's MCP servers; None offers no MCP tools.
    mcp: McpHub | None = None
    # The daemon's code indexes; None: no repo map and no find_symbol.
    index: IndexHub | None = None
    # Each session's notes section, as read at its first turn: session id -> (project, lines).
    notes: dict[str, tuple[str, list[str]]] = field(default_factory=dict)
    # The sessions told that their model's window is too small (once each).
    window_told: set[str] = field(default_factory=set)

    def forget_notes(self, project: str) -> None:
        """The project's notes changed: its sessions read them again at their next turn."""
        for session_id, (kept_for, _) in list(self.notes.items()):
            if kept_for == project:
                del self.notes[session_id]


@dataclass(kw_only=True, slots=True)
class TurnState:
    """One turn's working list and tallies, from its start to `turn.finished`."""

    working: list[JSONObject]  # [system prompt, *history, *this turn]
    first: int  # index in `working` of this turn's first message
    recorder: StepRecorder
    outcome: TurnOutcome = field(default_factory=TurnOutcome)
    usage: Usage = field(default_factory=Usage)
    route: str = ""  # the route the turn took, once decided
    reply: str = ""
    exit_code: int = exit_codes.MODEL_ERROR  # until the turn says otherwise
    profile: ProviderProfile | None = None  # once resolved: it prices the turn
    stopped: StopReason | None = None  # why the loop stopped short of an answer, if it did

    @classmethod
    def start(cls, session: Session, request: TurnRequest) -> TurnState:
        """The working list for `request`: a system prompt written once the turn's
        facts are known, the session's history, and the request."""
        working: list[JSONObject] = [
            {"role": "system", "content": ""},
            *session.history,
            {"role": "user", "content": request.text},
        ]
        recorder = StepRecorder(session, working, request.id)
        return cls(working=working, first=len(working) - 1, recorder=recorder)

    def finish(self, reply: str, exit_code: int, stopped: StopReason | None = None) -> None:
        self.reply, self.exit_code, self.stopped = reply, exit_code, stopped

    def turn_messages(self) -> list[JSONObject]:
        """Copies of this turn's messages (all of them, after a compaction rebased it)."""
        return [dict(m) for m in (self.working[self.first :] or self.working[1:])]

    def finished_event(self, turn: str) -> JSONObject:
        cost = cost_usd(self.usage, self.profile) if self.profile is not None else None
        return turn_finished(
            turn,
            self.exit_code,
            self.reply,
            usage=self.usage,
            cost_usd=cost,
            files_changed=self.outcome.files_changed,
            stopped=self.stopped,
            check=self.outcome.check,
        )


@dataclass(kw_only=True, slots=True)
class Turn:
    """One turn and what it runs with: the session, the request, the profile and
    config resolved when it started, and its state."""

    session: Session
    request: TurnRequest
    profile: ProviderProfile
    config: Config
    state: TurnState
