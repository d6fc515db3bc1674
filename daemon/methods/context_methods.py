"""`session.context`, `session.map`, `session.compact`, `plan.get` and `skills.list`.

What the model's context holds and how big it is, against the window its server
tells (`window`: the figure and where it came from; estimated: the system prompt
as the next turn builds it, the project's notes section included, the tool
schemas, those of the running MCP servers the session's folder uses, and the
history), replacing it with a resume brief, the session's plan
reconciled with the files on disk, and the skills a `/<name>` can load.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from pathlib import Path
from typing import Any

from coding_harness.daemon.agent.prompts import with_notes
from coding_harness.daemon.config.profiles import ConfigError
from coding_harness.daemon.context.notes_curator import prompt_lines
from coding_harness.daemon.context.plans import plan_status
from coding_harness.daemon.context.window import context_table, tokens
from coding_harness.daemon.context.window_fit import TurnWindow, window_for
from coding_harness.daemon.index.session_map import (
    SessionMap,
    conversation_texts,
    map_budget,
    session_map,
    with_repo_map,
)
from coding_harness.daemon.methods.lookup import session_of, session_profile
from coding_harness.daemon.methods.params import refuse_tool_children, text, workspace_folder
from coding_harness.daemon.methods.parts import MethodParts
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.server.rpc import Handler
from coding_harness.daemon.sessions.session import Session
from coding_harness.daemon.tools.builtin import AGENT_TOOLS
from coding_harness.daemon.turns.assemble import api_key, session_secrets, turn_system_prompt
from coding_harness.daemon.turns.skills import list_skills
from coding_harness.daemon.turns.small_window import map_tokens, small_schemas
from coding_harness.protocol import errors
from coding_harness.protocol import methods as m

log = logging.getLogger(__name__)

# A history shorter than this is left as it is by `session.compact`: the brief and its
# acknowledgement would be two messages, and longer than what they replace.
MIN_COMPACT_MESSAGES = 4


async def session_context(parts: MethodParts, conn: Connection, session: Any) -> dict[str, Any]:
    target = session_of(parts, session)
    config = parts.configs.get(target.cwd)
    window = await _window(parts, target)
    plan = parts.turns.plans.current(target, target.history)
    prompt = await asyncio.to_thread(turn_system_prompt, target.cwd, config, plan, window.small)
    found = await _map_of(parts, target, window)
    system = with_repo_map(with_notes(prompt, _notes_section(parts, target)), found.map)
    schemas = AGENT_TOOLS.schemas()
    if window.small:  # the short schemas a small window's turn offers
        schemas = small_schemas(schemas, web=config.search.enabled)
    tools = len(json.dumps(schemas))
    servers = parts.mcp.tool_sizes(config.mcp_servers)
    mcp_chars = sum(server["chars"] for server in servers)
    chars = len(system) + tools + mcp_chars
    table = context_table(target.history, system_chars=chars, limit=window.tokens)
    mcp = [{**server, "tokens": tokens(server["chars"])} for server in servers]
    return {
        "session": target.id,
        **table,
        "mcp_servers": mcp,
        "repo_map_tokens": found.tokens,
        "window": window.to_wire(),
    }


async def _window(parts: MethodParts, session: Session) -> TurnWindow:
    """The window the session's next turn fits its prompt to."""
    profile = session_profile(parts, session)
    config = parts.configs.get(session.cwd)
    return await window_for(parts.turns.facts, profile, config, api_key(session, profile))


async def _map_of(parts: MethodParts, session: Session, window: TurnWindow) -> SessionMap:
    """The repo map the session's next coding turn would carry."""
    config = parts.configs.get(session.cwd)
    texts = conversation_texts(session.history)
    redact = session_secrets(session, config).redact
    budget = map_budget(config.agent.repo_map_tokens, window.tokens)
    budget = map_tokens(budget) if window.small else budget
    return await session_map(parts.turns.index, session.cwd, budget, texts, redact)


async def session_repo_map(parts: MethodParts, conn: Connection, session: Any) -> dict[str, Any]:
    target = session_of(parts, session)
    found = await _map_of(parts, target, await _window(parts, target))
    return {"session": target.id, **found.to_wire()}


def _notes_section(parts: MethodParts, session: Session) -> list[str]:
    """The notes section's lines the session's next turn puts in its prompt: those its
    turns keep, or before its first turn the store's (none while it cannot be read,
    as a turn does)."""
    kept = parts.turns.kept_notes(session)
    if kept is not None:
        return kept
    try:
        notes = parts.store().notes.read(str(session.cwd))
    except sqlite3.Error as exc:
        log.warning("the project's notes could not be read (%s)", exc)
        return []
    return prompt_lines(notes)


async def session_compact(parts: MethodParts, conn: Connection, session: Any) -> dict[str, Any]:
    refuse_tool_children(conn)
    target = session_of(parts, session)
    session_profile(parts, target)  # a bad provider is refused before the job is queued
    if len(target.history) < MIN_COMPACT_MESSAGES and target.state == "idle":
        # One exchange is shorter than the brief that would replace it.
        return {"compacted": False, "messages": len(target.history)}
    job = parts.turns.compact(target)
    try:
        return await asyncio.shield(job)
    except ConfigError as exc:
        raise errors.InvalidParams(str(exc)) from None
    except asyncio.CancelledError:
        if not job.cancelled():  # this request was cancelled, not the job
            raise
        raise errors.SessionBusy("the compaction was cancelled before it finished") from None


async def plan_get(parts: MethodParts, conn: Connection, session: Any) -> dict[str, Any]:
    target = session_of(parts, session)
    plan = parts.turns.plans.current(target, target.history)
    if plan is None:
        return {"session": target.id, "plan": None}
    status = await asyncio.to_thread(plan_status, plan, target.cwd)
    return {"session": target.id, "plan": status}


async def skills_list(
    parts: MethodParts, conn: Connection, cwd: Any = None, session: Any = None
) -> dict[str, Any]:
    folder: Path | None = None
    if session is not None:
        folder = session_of(parts, session).cwd
    elif cwd is not None:
        folder = workspace_folder(text("cwd", cwd))
    listing = await asyncio.to_thread(list_skills, parts.home, folder)
    # `hidden`: skill folders not offered (a file leading out, a project skill named like
    # one of the user's), each with its reason, so the client can say so.
    return {
        "skills": [skill.to_wire() for skill in listing.skills],
        "hidden": [skill.to_wire() for skill in listing.hidden],
    }


HANDLERS: dict[str, Handler] = {
    m.SESSION_CONTEXT: session_context,
    m.SESSION_MAP: session_repo_map,
    m.SESSION_COMPACT: session_compact,
    m.PLAN_GET: plan_get,
    m.SKILLS_LIST: skills_list,
}
# May take long (a model call): the connection goes on answering meanwhile.
DETACHED = frozenset({m.SESSION_COMPACT})
