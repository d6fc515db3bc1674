"""Building one turn's parts from the session, its options and the config.

The tool context (workspace, approvals, dry run and -y, allowed extra
commands, fetch policy, search engine) and the agent loop (model with retries,
limits, progress probe, token budgets). Everything a turn needs is resolved
here when it starts, so a config reload never changes a turn in flight.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from coding_harness.protocol.methods import EventKind

from .agent.fingerprint import workspace_probe
from .agent.loop import AgentLoop, LoopSettings
from .config import Config, ProviderProfile
from .cost import add_cost, cost_usd
from .providers.pool import ProviderPool
from .providers.retrying import with_retries
from .recorder import StepRecorder
from .seams import ToolExecutor, Usage
from .sessions import Session
from .tools.context import ToolContext, TurnOutcome
from .tools.fetch import FetchPolicy
from .tools.search import SearchEngine, engine_named
from .tools.workspace import Workspace


@dataclass(kw_only=True, slots=True)
class TurnRequest:
    id: str
    text: str
    auto_approve: bool = False
    dry_run: bool = False
    # False when no client of this turn can answer a second question (a piped one-shot).
    interactive: bool = True


def tool_context(
    session: Session, request: TurnRequest, config: Config, outcome: TurnOutcome
) -> ToolContext:
    session.approvals.timeout = config.agent.approval_timeout
    return ToolContext(
        workspace=Workspace(session.cwd),
        approver=session.approvals,
        events=session,
        dry_run=request.dry_run,
        auto_approve=request.auto_approve,
        command_timeout=config.agent.command_timeout,
        check_timeout=config.agent.check_timeout,
        outcome=outcome,
        offer_revert=request.interactive,
        extra_commands=frozenset(session.options.extra_commands),
        fetch=FetchPolicy(allow_private=config.agent.fetch_private_urls),
        search=_search(session, config),
    )


def _search(session: Session, config: Config) -> SearchEngine | None:
    enabled = session.options.search_enabled
    if enabled is None:
        enabled = config.search.enabled
    if not enabled:
        return None
    name = session.options.search_engine or config.search.engine
    return engine_named(name, env={**os.environ, **session.key_env})


def api_key(session: Session, profile: ProviderProfile) -> str | None:
    if not profile.api_key_env:
        return None
    return session.key_env.get(profile.api_key_env) or os.environ.get(profile.api_key_env)


def build_loop(
    *,
    session: Session,
    request: TurnRequest,
    profile: ProviderProfile,
    config: Config,
    pool: ProviderPool,
    tools: ToolExecutor,
    recorder: StepRecorder,
    turn_usage: Usage,
) -> AgentLoop:
    def session_tokens() -> tuple[int, int | None]:
        used = session.usage.prompt_tokens + session.usage.completion_tokens
        budget = session.options.token_budget or config.agent.session_token_budget
        return used, budget

    return AgentLoop(
        model=with_retries(
            pool.model_for(profile, api_key(session, profile)), profile.retry, session
        ),
        tools=tools,
        events=recorder,
        settings=LoopSettings(
            model_id=profile.model,
            generation=profile.generation,
            max_iterations=config.agent.max_iterations,
            turn_token_budget=config.agent.turn_token_budget,
            stall_limit=0 if request.dry_run else config.agent.stall_limit,
        ),
        on_usage=usage_counter(session, profile, recorder, turn_usage),
        progress_probe=workspace_probe(session.cwd),
        session_tokens=session_tokens,
    )


def usage_counter(
    session: Session, profile: ProviderProfile, recorder: StepRecorder, turn_usage: Usage
) -> Callable[[Usage], None]:
    """Counts one model call's tokens for the turn, the session and the store."""

    def on_usage(usage: Usage) -> None:
        recorder.add_usage(usage, profile)
        turn_usage.add(usage)
        session.usage.add(usage)
        session.cost_usd = add_cost(session.cost_usd, cost_usd(usage, profile))
        session.emit(
            EventKind.USAGE,
            {
                **usage.to_wire(),
                "turn": turn_usage.to_wire(),
                "session_cost_usd": session.cost_usd,
            },
        )

    return on_usage
