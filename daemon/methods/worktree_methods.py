"""The `worktree.*` methods, and the worktree `session.create {worktree}` makes.

The work is `daemon/worktrees/`'s; here requests are checked (the worktree
named exists, its session runs no turn, the caller is not one of the agent's
own processes) and git's failures become `WorktreeFailed` with their line.
Expected outcomes are answers, not errors: a merge that conflicts says so in
`{merged: false, conflicts}`, a removal refused for unmerged work in
`{removed: false, message}`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any, TypeVar

from coding_harness.daemon.methods.params import flag, refuse_tool_children, text
from coding_harness.daemon.methods.parts import MethodParts
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.server.rpc import Handler
from coding_harness.daemon.worktrees.create import (
    CannotCreate,
    Created,
    create_worktree,
    discard,
    name_problem,
    worktrees_folder,
)
from coding_harness.daemon.worktrees.git import GitFailed
from coding_harness.daemon.worktrees.merge import merge_worktree
from coding_harness.daemon.worktrees.records import NoSuchWorktree, WorktreeBook, WorktreeRecord
from coding_harness.daemon.worktrees.remove import Unmerged, remove_worktree
from coding_harness.daemon.worktrees.status import diff_text, look
from coding_harness.protocol import errors
from coding_harness.protocol import methods as m

T = TypeVar("T")
WORKTREE_SHAPE = "worktree must be true (a generated name) or a name"


def worktree_param(value: Any) -> str | None:
    """`session.create`'s `worktree`: None for none, "" for a generated name, or a name."""
    if value is None or value is False:
        return None
    if value is True or value == "":
        return ""
    if not isinstance(value, str):
        raise errors.InvalidParams(WORKTREE_SHAPE)
    problem = name_problem(value)
    if problem:
        raise errors.InvalidParams(problem)
    return value


@contextlib.asynccontextmanager
async def new_worktree(
    parts: MethodParts, cwd: Path, worktree: Any, session: str
) -> AsyncIterator[Created | None]:
    """The new session's worktree of the repository `cwd` is in (None when `worktree`
    asks for none); taken away again when the session's creation fails after it."""
    wanted = worktree_param(worktree)
    if wanted is None:
        yield None
        return
    folder = worktrees_folder(parts.home)
    try:
        created = await create_worktree(cwd, wanted or None, session, WorktreeBook(), folder)
    except CannotCreate as exc:
        raise errors.InvalidParams(str(exc)) from None
    except GitFailed as exc:
        raise errors.WorktreeFailed(str(exc)) from None
    try:
        yield created
    except BaseException:
        await discard(created.record, WorktreeBook())
        raise


def created_worktree(created: Created) -> dict[str, Any]:
    """`session.create`'s `worktree`: where, on which branch, from which, and the notice."""
    record = created.record
    return {**record.brief(), "base": record.base, "notice": created.notice}


def session_worktree(session: str) -> dict[str, Any] | None:
    """The `worktree` of a session's summary: `{name, branch, path}`, or None."""
    record = WorktreeBook().of_session(session)
    return record.brief() if record is not None else None


def refuse_gone_worktree(session: str, cwd: Path) -> None:
    """A task for a session whose worktree folder was deleted by hand: -32602 naming the fix."""
    if cwd.is_dir():
        return
    record = WorktreeBook().of_session(session)
    if record is not None:
        raise errors.InvalidParams(
            f"the worktree folder {record.path} of this session was deleted by hand; its "
            f"branch {record.branch} keeps what was committed (harness worktree merge "
            f"{record.name}); start a new session, with --worktree for a new worktree"
        )


async def _git(work: Awaitable[T]) -> T:
    try:
        return await work
    except GitFailed as exc:
        raise errors.WorktreeFailed(str(exc)) from None


def _record(worktree: Any) -> WorktreeRecord:
    try:
        return WorktreeBook().find(text("worktree", worktree))
    except NoSuchWorktree as exc:
        raise errors.InvalidParams(str(exc)) from None


def _refuse_running(parts: MethodParts, record: WorktreeRecord, doing: str) -> None:
    session = parts.sessions.get(record.session) if record.session else None
    if session is not None and session.state != "idle":
        raise errors.SessionBusy(
            f"session {session.id} is working in {record.name}; wait for its turn to end "
            f"(or cancel it) before you {doing} the worktree"
        )


async def worktree_list(parts: MethodParts, conn: Connection) -> dict[str, Any]:
    found = []
    for record in WorktreeBook().all():
        seen = await _git(look(record))
        session = parts.sessions.get(record.session) if record.session else None
        found.append({**seen.wire(), "session_state": session.state if session else None})
    return {"worktrees": found}


async def worktree_diff(parts: MethodParts, conn: Connection, worktree: Any) -> dict[str, Any]:
    record = _record(worktree)
    diff, note = await _git(diff_text(record))
    return {"worktree": record.wire(), "diff": diff, "note": note}


async def worktree_merge(parts: MethodParts, conn: Connection, worktree: Any) -> dict[str, Any]:
    refuse_tool_children(conn)
    record = _record(worktree)
    _refuse_running(parts, record, "merge")
    outcome = await _git(merge_worktree(record))
    return {"worktree": record.wire(), **outcome.wire()}


async def worktree_remove(
    parts: MethodParts, conn: Connection, worktree: Any, force: Any = None
) -> dict[str, Any]:
    refuse_tool_children(conn)
    record = _record(worktree)
    _refuse_running(parts, record, "remove")
    try:
        done = await _git(remove_worktree(record, WorktreeBook(), force=flag("force", force)))
    except Unmerged as exc:
        return {"worktree": record.wire(), "removed": False, "message": str(exc)}
    return {
        "worktree": record.wire(),
        "removed": True,
        "message": done.message,
        "dropped": done.dropped,
        "branch_tip": done.branch_tip,
    }


HANDLERS: dict[str, Handler] = {
    m.WORKTREE_LIST: worktree_list,
    m.WORKTREE_DIFF: worktree_diff,
    m.WORKTREE_MERGE: worktree_merge,
    m.WORKTREE_REMOVE: worktree_remove,
}
