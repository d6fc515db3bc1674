"""Building one turn's parts from the session, its options and the config.

The tool context (workspace, approvals, dry run and -y, the permission mode,
allowed extra commands, fetch policy, search engine, the plan, the buffers of
an attached editor), the agent loop (model with retries, limits, progress probe, token
budgets, compaction) and the system prompt (rules, local services, AGENTS.md,
the plan). Everything a turn needs is resolved here when it starts, so a
config reload never changes a turn in flight; only the editor whose buffers
read_file asks is looked up at each read, so one that attaches mid-turn counts.
The session's permission mode is resolved when the turn starts too
(`with_session_mode`): the turn's config carries it as `agent.mode`, so a
`/mode` during a turn takes effect at the next one.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from coding_harness.daemon.agent.fingerprint import Fingerprinter, workspace_probe
from coding_harness.daemon.agent.loop import AgentLoop, ContextKeeper, LoopSettings
from coding_harness.daemon.agent.prompts import project_instructions, system_prompt
from coding_harness.daemon.agent.seams import EventSink, JSONObject, Model, ToolExecutor, Usage
from coding_harness.daemon.config.loader import Config, home_dir
from coding_harness.daemon.config.profiles import ProviderProfile
from coding_harness.daemon.context.compactor import Compactor, context_limit
from coding_harness.daemon.context.plan_book import PlanKeeper
from coding_harness.daemon.context.plans import Plan, guidance
from coding_harness.daemon.context.window_fit import TurnWindow
from coding_harness.daemon.providers.model_gate import queue_notice
from coding_harness.daemon.providers.pool import ProviderPool
from coding_harness.daemon.providers.retrying import with_retries
from coding_harness.daemon.security.secrets import Secrets, collect_secrets
from coding_harness.daemon.sessions.debug_log import DEBUG_SWITCHES
from coding_harness.daemon.sessions.editor_buffers import EditorBuffers
from coding_harness.daemon.sessions.session import Session
from coding_harness.daemon.store.recorder import StepRecorder
from coding_harness.daemon.tools.context import PlanHooks, ToolContext, TurnOutcome
from coding_harness.daemon.tools.shell.allow_list import Allowances
from coding_harness.daemon.tools.shell.sandbox import (
    INSTALL_HINT,
    Sandbox,
    sandbox_for,
    wide_workspace_notice,
)
from coding_harness.daemon.tools.web.fetch import FetchPolicy
from coding_harness.daemon.tools.web.search import SearchEngine, engine_named
from coding_harness.daemon.tools.workspace import Workspace
from coding_harness.daemon.turns.local_services import services_paragraph
from coding_harness.daemon.turns.routing import TurnKind
from coding_harness.daemon.usage.cost import add_cost, cost_usd
from coding_harness.daemon.usage.spending import TurnSpending, turn_spending
from coding_harness.protocol.methods import EventKind


@dataclass(kw_only=True, slots=True)
class TurnRequest:
    id: str
    text: str
    auto_approve: bool = False
    dry_run: bool = False
    kind: TurnKind = field(default_factory=TurnKind)
    # Set for a `session.compact` job, which runs in the turn queue but is not a turn.
    compaction: asyncio.Future[JSONObject] | None = None
    # The turn starts once this is set: after the submit's answer has gone out.
    released: asyncio.Event = field(default_factory=asyncio.Event)
    withdrawn: bool = False  # cancelled before it started
    # A code-index refresh begun at this time or later is current for the turn's map
    # (None: refresh again, as a queued turn must after the turns before it).
    map_fresh_since: float | None = None


def tool_context(
    session: Session,
    request: TurnRequest,
    config: Config,
    outcome: TurnOutcome,
    plans: PlanHooks | None = None,
    events: EventSink | None = None,
) -> ToolContext:
    """`events`: where tools report (the turn's recorder, which stores write journals
    at once); the session itself when not given."""
    session.approvals.timeout = config.agent.approval_timeout
    session.approvals.notify = config.notify
    return ToolContext(
        workspace=Workspace(session.cwd),
        approver=session.approvals,
        events=events or session,
        dry_run=request.dry_run,
        auto_approve=request.auto_approve,
        mode=config.agent.mode,
        command_timeout=config.agent.command_timeout,
        check_timeout=config.agent.check_timeout,
        check_command=config.agent.check_command,
        outcome=outcome,
        extra_commands=Allowances(session.options.extra_commands, config.agent.allow_commands),
        fetch=FetchPolicy(allow_private=config.agent.fetch_private_urls),
        search=_search(session, config),
        plans=plans,
        secrets=session_secrets(session, config),
        env_pass=config.agent.env_pass,
        buffers=EditorBuffers(session),
        sandbox=turn_sandbox(session, config, events or session),
    )


def turn_sandbox(session: Session, config: Config, events: EventSink) -> Sandbox:
    """The sandbox of the turn's commands; once per session, a notice when "auto"
    finds none here and commands run unsandboxed, and one when the workspace is
    the home folder or holds it (`/`)."""
    agent = config.agent
    home = home_dir()
    sandbox = sandbox_for(agent.sandbox, agent.sandbox_network, home, agent.sandbox_home)
    if agent.sandbox == "auto" and not sandbox.active and not session.sandbox_told:
        session.sandbox_told = True
        message = f"commands run without a sandbox here: {sandbox.reason}; {INSTALL_HINT}"
        events.emit(EventKind.NOTICE, {"message": message})
    if not session.workspace_told:
        session.workspace_told = True
        told = wide_workspace_notice(session.cwd, home, sandbox.active)
        if told is not None:
            events.emit(EventKind.NOTICE, {"message": told})
    return sandbox


def session_mode(session: Session, config: Config) -> str:
    """The session's permission mode: its own choice, else the config's `agent.mode`."""
    return session.options.mode or config.agent.mode


def with_session_mode(config: Config, session: Session) -> Config:
    """`config` as one turn of `session` runs with: `agent.mode` is the session's mode."""
    mode = session_mode(session, config)
    if mode == config.agent.mode:
        return config
    return dataclasses.replace(config, agent=dataclasses.replace(config.agent, mode=mode))


def session_secrets(session: Session, config: Config) -> Secrets:
    """What counts as a secret for this session: every profile's key variable, the
    search keys and secret-looking names, with their values from the client and
    from the daemon."""
    key_env = tuple(sorted(session.key_env.items()))
    return _secrets(tuple(config.key_env_names()), key_env, frozenset(os.environb.items()))


@functools.lru_cache(maxsize=16)
def _secrets(
    names: tuple[str, ...],
    key_env: tuple[tuple[str, str], ...],
    daemon_env: frozenset[tuple[bytes, bytes]],  # the key: collect reads os.environ
) -> Secrets:
    """Kept for the next turn with the same keys and environment: every turn asks, and
    the scan of the environment and the encodings of each value cost more than the
    look-up (the raw environment is compared, which decodes nothing)."""
    return collect_secrets(names, dict(key_env), os.environ)


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


def model_for(
    session: Session, profile: ProviderProfile, pool: ProviderPool, config: Config | None = None
) -> Model:
    """The profile's model, asked with the session's key and the profile's retries;
    while the session's debug log is on, each raw exchange is written there
    (`debug_log.py`), redacted with the session's secrets (with `config`, every
    profile's key variable; without, this profile's and the secret-looking ones)."""
    key = api_key(session, profile)
    recorder = None
    if DEBUG_SWITCHES.is_on(session.id):
        secrets = (
            session_secrets(session, config)
            if config is not None
            else collect_secrets(_key_names(profile), session.key_env, os.environ)
        )
        recorder = DEBUG_SWITCHES.recorder(session.id, secrets, key)
    told = queue_notice(session, profile.name)  # its requests wait at the profile's gate
    model = pool.model_for(profile, key, recorder=recorder, owner=session.id, on_queued=told)
    return with_retries(model, profile.retry, session)


def _key_names(profile: ProviderProfile) -> list[str]:
    return [profile.api_key_env] if profile.api_key_env else []


def _probe(session: Session) -> Fingerprinter:
    """The session's fingerprinter: its cached folder listings make later walks cheap."""
    if session.progress_probe is None:
        session.progress_probe = workspace_probe(session.cwd)
    return session.progress_probe


def build_loop(
    *,
    session: Session,
    request: TurnRequest,
    profile: ProviderProfile,
    config: Config,
    model: Model,
    tools: ToolExecutor,
    recorder: StepRecorder,
    on_usage: Callable[[Usage], None],
    keeper: ContextKeeper | None = None,
    spend_check: Callable[[list[JSONObject]], str | None] | None = None,
    secrets: Secrets | None = None,
) -> AgentLoop:
    def session_tokens() -> tuple[int, int | None]:
        used = session.usage.prompt_tokens + session.usage.completion_tokens
        budget = session.options.token_budget or config.agent.session_token_budget
        return used, budget

    return AgentLoop(
        model=model,
        tools=tools,
        events=recorder,
        settings=LoopSettings(
            model_id=profile.model,
            generation=profile.generation,
            max_iterations=config.agent.max_iterations,
            turn_token_budget=config.agent.turn_token_budget,
            # A dry run or a summary changes nothing on purpose.
            stall_limit=0 if request.dry_run or request.kind.mode else config.agent.stall_limit,
        ),
        on_usage=on_usage,
        progress_probe=_probe(session),
        session_tokens=session_tokens,
        context_keeper=keeper,
        spend_check=spend_check,
        redact=secrets.redact_data if secrets is not None else None,
    )


def build_compactor(
    *,
    profile: ProviderProfile,
    config: Config,
    model: Model,
    events: EventSink,
    on_usage: Callable[[Usage], None],
    plans: PlanKeeper | None,
    tools: ToolExecutor | None = None,
    on_replaced: Callable[[], None] | None = None,
    extra_files: Callable[[], list[str]] | None = None,
    window: TurnWindow | None = None,
) -> Compactor:
    """`window`: the turn's (its size, and a small one compacts earlier); without it,
    the configured limit."""
    compact_at = config.agent.compact_at
    compactor = Compactor(
        model=model,
        model_id=profile.model,
        generation=profile.generation,
        limit=window.tokens if window is not None else context_limit(profile, config),
        threshold=window.compact_at(compact_at) if window is not None else compact_at,
        events=events,
        on_usage=on_usage,
        plans=plans,
        on_replaced=on_replaced,
        extra_files=extra_files,
    )
    if tools is not None:
        compactor.extra_chars = len(json.dumps(tools.schemas()))
    return compactor


def spending_for(
    session: Session, request: TurnRequest, profile: ProviderProfile, config: Config
) -> TurnSpending:
    """The turn's view of the spending limits (see `spending.py`)."""
    return turn_spending(
        session_limit=config.agent.spend_limit_session_usd,
        day_limit=config.agent.spend_limit_day_usd,
        profile=profile,
        store=session.store.usage if session.store is not None else None,
        session_id=session.id,
        turn_id=request.id,
        session_cost=lambda: session.cost_usd,
    )


def turn_system_prompt(cwd: Path, config: Config, plan: Plan | None, small: bool = False) -> str:
    """The coding system prompt with what is known now; blocking (ports, files); `small`:
    the short rules of a small window."""
    return system_prompt(
        cwd,
        services=services_paragraph(config),
        instructions=project_instructions(cwd),
        plan=guidance(plan, cwd) if plan else "",
        mode=config.agent.mode,
        small=small,
    )


def usage_counter(
    session: Session,
    profile: ProviderProfile,
    recorder: StepRecorder,
    turn_usage: Usage,
    spending: TurnSpending | None = None,
) -> Callable[[Usage], None]:
    """Counts one model call's tokens for the turn, the session and the store."""

    def on_usage(usage: Usage) -> None:
        if spending is not None:
            spending.observe(usage)
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
