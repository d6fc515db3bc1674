"""`session.context`, `session.compact`, `plan.get` and `skills.list`.

What the model's context holds and how big it is (estimated), replacing it
with a resume brief, the session's plan reconciled with the files on disk,
and the skills a `/<name>` can load.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coding_harness.daemon.config.loader import ConfigError, ProviderProfile, with_model
from coding_harness.daemon.context.compactor import context_limit
from coding_harness.daemon.context.plans import plan_status
from coding_harness.daemon.context.window import context_table
from coding_harness.daemon.methods.params import refuse_tool_children, text, workspace_folder
from coding_harness.daemon.methods.session_methods import session_of
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.server.rpc import MethodTable
from coding_harness.daemon.sessions.session import Session
from coding_harness.daemon.tools.builtin import AGENT_TOOLS
from coding_harness.daemon.turns.assemble import turn_system_prompt
from coding_harness.daemon.turns.skills import find_skills
from coding_harness.protocol import errors
from coding_harness.protocol import methods as m

if TYPE_CHECKING:
    from coding_harness.daemon.app import Daemon


def _profile(daemon: Daemon, session: Session) -> ProviderProfile:
    config = daemon.configs.get(session.cwd)
    try:
        return with_model(config.profile(session.provider), session.model)
    except ConfigError as exc:
        raise errors.InvalidParams(str(exc)) from None


def register(table: MethodTable, daemon: Daemon) -> None:
    @table.register(m.SESSION_CONTEXT)
    async def session_context(conn: Connection, session: Any) -> dict[str, Any]:
        target = session_of(daemon, session)
        config = daemon.configs.get(target.cwd)
        limit = context_limit(_profile(daemon, target), config)
        plan = daemon.turns.plans.current(target, target.history)
        system = await asyncio.to_thread(turn_system_prompt, target.cwd, config, plan)
        tools = len(json.dumps(AGENT_TOOLS.schemas()))
        table = context_table(target.history, system_chars=len(system) + tools, limit=limit)
        return {"session": target.id, **table}

    @table.register(m.SESSION_COMPACT, detached=True)
    async def session_compact(conn: Connection, session: Any) -> dict[str, Any]:
        refuse_tool_children(conn)
        target = session_of(daemon, session)
        _profile(daemon, target)  # a bad provider is refused before the job is queued
        job = daemon.turns.compact(target)
        try:
            return await asyncio.shield(job)
        except ConfigError as exc:
            raise errors.InvalidParams(str(exc)) from None
        except asyncio.CancelledError:
            if not job.cancelled():  # this request was cancelled, not the job
                raise
            raise errors.SessionBusy("the compaction was cancelled before it finished") from None

    @table.register(m.PLAN_GET)
    async def plan_get(conn: Connection, session: Any) -> dict[str, Any]:
        target = session_of(daemon, session)
        plan = daemon.turns.plans.current(target, target.history)
        if plan is None:
            return {"session": target.id, "plan": None}
        status = await asyncio.to_thread(plan_status, plan, target.cwd)
        return {"session": target.id, "plan": status}

    @table.register(m.SKILLS_LIST)
    async def skills_list(conn: Connection, cwd: Any = None, session: Any = None) -> dict[str, Any]:
        folder: Path | None = None
        if session is not None:
            folder = session_of(daemon, session).cwd
        elif cwd is not None:
            folder = workspace_folder(text("cwd", cwd))
        skills = await asyncio.to_thread(find_skills, daemon.home, folder)
        return {"skills": [skill.to_wire() for skill in skills]}
