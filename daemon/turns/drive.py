"""A turn's drive: from the route to the reply, or a compaction between turns.

`drive_turn` wires the turn's parts (plan keeper, tools, model, compactor,
loop), builds the system prompt (with the project's notes, read once per
session: see `project_notes`), publishes the route and sends the request
down it: the general route is one call without tools (with the conversation so
far), the others the tool loop, or, for a model that takes no tools, the text
edit format (`text_edits.py`). `compact_session` replaces a session's history with a resume brief
between turns, for `session.compact`. What the turn holds as it goes is
`state.py`'s; the queue that runs it, `runner.py` and `worker.py`.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from coding_harness.daemon.agent.loop import AgentLoop, LoopResult
from coding_harness.daemon.agent.model_errors import ModelToolsUnsupported
from coding_harness.daemon.agent.prompts import GENERAL_PROMPT, with_notes
from coding_harness.daemon.agent.seams import JSONObject, ToolExecutor, Usage
from coding_harness.daemon.config.hook_settings import USER_PROMPT_SUBMIT
from coding_harness.daemon.config.loader import Config, home_dir
from coding_harness.daemon.config.profiles import ProviderProfile
from coding_harness.daemon.context.notes_curator import prompt_lines
from coding_harness.daemon.context.plan_book import PlanKeeper
from coding_harness.daemon.context.plans import Plan
from coding_harness.daemon.context.window_fit import (
    TurnWindow,
    raise_advice,
    refuse_oversized,
    window_for,
)
from coding_harness.daemon.hooks.runner import HookRunner
from coding_harness.daemon.hooks.tools import HookedTools
from coding_harness.daemon.hooks.turn_hooks import prompt_context, turn_hooks, until_stopped
from coding_harness.daemon.index.session_map import (
    conversation_texts,
    map_budget,
    session_map,
    with_repo_map,
)
from coding_harness.daemon.index.symbols import IndexSymbols
from coding_harness.daemon.mcp.executor import McpTools
from coding_harness.daemon.mcp.hub import Lease
from coding_harness.daemon.security.secrets import Secrets
from coding_harness.daemon.sessions.session import Session
from coding_harness.daemon.store.recorder import StepRecorder
from coding_harness.daemon.tools.build_files import BuildFiles, read_build_files
from coding_harness.daemon.tools.builtin import READ_ONLY_TOOLS
from coding_harness.daemon.tools.edit.seen import forget_session
from coding_harness.daemon.tools.registry import OnlyTools
from coding_harness.daemon.tools.web.search import SearchEngine
from coding_harness.daemon.turns.assemble import (
    api_key,
    build_compactor,
    build_loop,
    model_for,
    spending_for,
    tool_context,
    turn_system_prompt,
    usage_counter,
)
from coding_harness.daemon.turns.background import Background
from coding_harness.daemon.turns.checkpointing_tools import CheckpointingTools
from coding_harness.daemon.turns.conversation import conversation
from coding_harness.daemon.turns.intent import Ask, model_asker
from coding_harness.daemon.turns.routing import (
    SUMMARY_MODE,
    decide_route,
    request_text,
    with_search,
)
from coding_harness.daemon.turns.small_window import (
    SmallWindowTools,
    map_tokens,
    notes_lines,
)
from coding_harness.daemon.turns.state import Turn, TurnDeps
from coding_harness.daemon.turns.text_edits import tell_no_tools, text_edit_turn
from coding_harness.daemon.turns.workspace_terms import workspace_terms
from coding_harness.protocol.methods import EventKind

log = logging.getLogger(__name__)


@dataclass(kw_only=True, slots=True)
class _Parts:
    loop: AgentLoop
    plans: PlanKeeper
    ask: Ask
    search: SearchEngine | None
    secrets: Secrets
    hooks: HookRunner
    tools: ToolExecutor


async def drive_turn(deps: TurnDeps, turn: Turn) -> LoopResult:
    lease = await mcp_lease(deps, turn)
    try:
        return await _drive(deps, turn, lease)
    finally:
        lease.release()


async def mcp_lease(deps: TurnDeps, turn: Turn) -> Lease:
    """The MCP tools of the session's folder for this turn, their servers started."""
    session = turn.session
    servers = {**turn.config.mcp_servers, **session.options.mcp_servers}
    if deps.mcp is None or not servers:
        return Lease()
    lease = await deps.mcp.lease(session.id, servers, session.key_env)
    for notice in lease.notices:
        turn.state.recorder.emit(EventKind.NOTICE, {"message": notice})
    return lease


async def _drive(deps: TurnDeps, turn: Turn, lease: Lease) -> LoopResult:
    session, request, config, state = turn.session, turn.request, turn.config, turn.state
    working, events = state.working, state.recorder
    window = await turn_window(deps, turn)
    refuse_oversized(request.text, window)  # PromptTooLarge: before any model call
    with Background() as jobs:
        # What blocks (files, ports, the index) runs in a worker thread while the turn is
        # assembled: the system prompt, and the build files as the turn found them (`make`
        # asks before running changed ones), read after the UserPromptSubmit hooks if any.
        plan = deps.plans.current(session, working[1:])
        hooked = bool(config.hooks.for_event(USER_PROMPT_SUBMIT))
        early = jobs.thread(_blocking_reads, session.cwd, config, plan, not hooked, window.small)
        parts = _assemble(deps, turn, lease, window)
        added = await prompt_context(parts.hooks, request.text)  # HookHalt: refused
        late = jobs.thread(read_build_files, session.cwd) if hooked else None
        decision = await decide_route(
            request.text,
            request.kind,
            config.agent.classify,
            parts.ask,
            events,
            terms=lambda: workspace_terms(deps.index, session.cwd),
        )
        state.route = decision.route
        found = None
        if decision.route != "general":
            texts = conversation_texts(session.history, request.text)
            budget = map_budget(config.agent.repo_map_tokens, window.tokens)
            budget = map_tokens(budget) if window.small else budget
            redact = parts.secrets.redact
            # The refresh its submit started, unless hooks or earlier turns came between.
            since = None if hooked else request.map_fresh_since
            found = jobs.start(session_map(deps.index, session.cwd, budget, texts, redact, since))
        prompt, noted = await early
        notes = project_notes(deps, session)
        working[0]["content"] = with_notes(prompt, notes_lines(notes) if window.small else notes)
        if found is not None:
            state.outcome.build_files = noted if late is None else await late
            repo_map = (await found).map
            working[0]["content"] = with_repo_map(str(working[0]["content"]), repo_map)
    text = request_text(request.text, request.kind, home=home_dir(), cwd=session.cwd)
    search = parts.search
    leak = parts.secrets.leak_in(text) if search is not None else None
    if leak is not None and decision.route != "coding":
        events.emit(
            EventKind.NOTICE,
            {"message": f"web search skipped: the request carries {leak}, which stays local"},
        )
        search = None
    searched = await with_search(text, decision.route, search, events)
    working[-1]["content"] = _pending_note(session) + searched + (added and f"\n\n{added}")
    if decision.route == "general":
        return await answer_general(parts.loop, working, window.tokens)
    facts = deps.pool.facts
    if facts.no_tools(turn.profile):  # the text edit format (`text_edits.py`)
        return await text_edit_turn(parts.loop, parts.tools, working, session.cwd)
    try:
        return await until_stopped(parts.loop, working, parts.hooks)
    except ModelToolsUnsupported:
        await tell_no_tools(facts, turn.profile, api_key(session, turn.profile), events)
        return await text_edit_turn(parts.loop, parts.tools, working, session.cwd)


async def turn_window(deps: TurnDeps, turn: Turn) -> TurnWindow:
    """The window the turn fits its prompt to, as its server says it (`window_fit.py`);
    once per session, a window too small to be useful gets a notice saying how to
    raise it."""
    session, profile = turn.session, turn.profile
    window = await window_for(deps.pool.facts, profile, turn.config, api_key(session, profile))
    advice = raise_advice(window, profile)
    if advice is not None and session.id not in deps.window_told:
        deps.window_told.add(session.id)
        turn.state.recorder.emit(EventKind.NOTICE, {"message": advice})
    return window


def _blocking_reads(
    cwd: Path, config: Config, plan: Plan | None, with_build_files: bool, small: bool
) -> tuple[str, BuildFiles | None]:
    """The system prompt, and the build files when asked: one trip to a worker thread."""
    return turn_system_prompt(cwd, config, plan, small), (
        read_build_files(cwd) if with_build_files else None
    )


def _pending_note(session: Session) -> str:
    """What the session's next turn must be told first (the files an undo put back)."""
    if session.store is None:
        return ""
    try:
        return session.store.checkpoints.take_note(session.id)
    except sqlite3.Error as exc:
        log.warning("the pending note could not be read (%s)", exc)
        return ""


def project_notes(deps: TurnDeps, session: Session) -> list[str]:
    """The notes section's lines for the session's system prompt: the project's notes
    as they were at the session's first turn (so the prompt stays the same from turn
    to turn), until someone changes them (`memory.set`)."""
    kept = deps.notes.get(session.id)
    if kept is not None:
        return kept[1]
    project = str(session.cwd)
    try:
        notes = session.store.notes.read(project) if session.store is not None else []
    except sqlite3.Error as exc:
        log.warning("the project's notes could not be read (%s)", exc)
        notes = []
    lines = prompt_lines(notes)
    deps.notes[session.id] = (project, lines)
    return lines


def _assemble(deps: TurnDeps, turn: Turn, lease: Lease, window: TurnWindow) -> _Parts:
    """The turn's plan keeper, tools, model, compactor and loop, wired together; on a
    small window, the tools in short (`small_window.py`)."""
    session, request, profile, config = turn.session, turn.request, turn.profile, turn.config
    state = turn.state
    working, recorder = state.working, state.recorder
    keeper = PlanKeeper(deps.plans, session, recorder, lambda: working[1:])
    context = tool_context(session, request, config, state.outcome, plans=keeper, events=recorder)
    if deps.index is not None:
        context.symbols = IndexSymbols(deps.index, session.cwd)
    tools: ToolExecutor = deps.build_tools(context)
    if lease.offered:
        tools = McpTools(tools, lease.offered, context)
    tools = CheckpointingTools(tools, recorder.checkpoints)
    hooks = turn_hooks(config.hooks, session.id, context, recorder)
    tools = HookedTools(tools, hooks, context.approver) if config.hooks.around_tools else tools
    if request.kind.mode == SUMMARY_MODE:
        tools = OnlyTools(tools, READ_ONLY_TOOLS)
    if window.small:
        tools = SmallWindowTools(tools, web=context.search is not None, request=request.text)
    model = model_for(session, profile, deps.pool, config)
    spending = spending_for(session, request, profile, config)
    if spending.notice:
        recorder.emit(EventKind.NOTICE, {"message": spending.notice})
    on_usage = usage_counter(session, profile, recorder, state.usage, spending)
    compactor = build_compactor(
        profile=profile,
        config=config,
        model=model,
        events=recorder,
        on_usage=on_usage,
        plans=keeper,
        tools=tools,
        on_replaced=_replaced(session, recorder),
        extra_files=lambda: list(state.outcome.files_changed),
        window=window,
    )
    loop = build_loop(
        session=session,
        request=request,
        profile=profile,
        config=config,
        model=model,
        tools=tools,
        recorder=recorder,
        on_usage=on_usage,
        keeper=compactor,
        spend_check=spending.check,
        secrets=context.secrets,
    )
    ask = model_asker(model, profile.model, profile.generation, on_usage)
    return _Parts(
        loop=loop,
        plans=keeper,
        ask=ask,
        search=context.search,
        secrets=context.secrets,
        hooks=hooks,
        tools=tools,
    )


def _replaced(session: Session, recorder: StepRecorder) -> Callable[[], None]:
    """What follows a compaction: the recorder starts over, and what the model had read
    is forgotten (write_file asks again before replacing a file it read earlier)."""

    def replaced() -> None:
        recorder.rebase()
        forget_session(session.approvals)

    return replaced


async def answer_general(
    loop: AgentLoop, working: list[JSONObject], context_tokens: int
) -> LoopResult:
    """A general question: its own short prompt, the conversation so far (what was said,
    not the tool calls: `conversation.py`), no tools."""
    said = conversation(working[1:-1], context_tokens)
    call = [{"role": "system", "content": GENERAL_PROMPT}, *said, working[-1]]
    result = await loop.answer(call)
    working.append(call[-1])
    return result


async def compact_session(
    deps: TurnDeps, session: Session, profile: ProviderProfile, config: Config, job: str
) -> JSONObject:
    """Replace the session's history with a resume brief; what `session.compact` answers."""
    working: list[JSONObject] = [{"role": "system", "content": ""}, *session.history]
    recorder = StepRecorder(session, working, job)
    keeper = PlanKeeper(deps.plans, session, recorder, lambda: working[1:])
    compactor = build_compactor(
        profile=profile,
        config=config,
        model=model_for(session, profile, deps.pool, config),
        events=recorder,
        on_usage=usage_counter(session, profile, recorder, Usage()),
        plans=keeper,
        on_replaced=_replaced(session, recorder),
    )
    done = await compactor.compact(working, "manual", mid_turn=False)
    session.history = working[1:]
    recorder.save(force=True)
    if compactor.last is None or not done:
        return {"compacted": False, "messages": len(session.history)}
    return {"compacted": True, **compactor.last.to_wire()}
