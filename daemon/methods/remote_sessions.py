"""Sessions another runner of the hub holds, seen from this daemon's methods.

A request naming a session this daemon does not hold looks it up in the hub's
`sessions` (full id, short id, or a prefix of either that fits one session of
another runner) when a hub is configured. `session.attach` follows it
(`remote_attach.py`); `session.submit`, `approval.respond` and `session.cancel`
reach its runner through the hub's inbox (`team/inbox_send.py`) and answer with
the runner's outcome. Every other method gets one error naming where the
session runs (`remote_aware`). Only the text of a task travels: never the
client's API keys, never auto-approve or an option that widens what runs.

daemon/team is imported only here, lazily, so a daemon without a hub never
imports psycopg.
"""

from __future__ import annotations

import functools
import getpass
import socket
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from coding_harness.daemon.methods.lookup import AMBIGUOUS_SHOWN, fits_id
from coding_harness.daemon.methods.params import text
from coding_harness.daemon.methods.parts import MethodParts
from coding_harness.protocol import errors

if TYPE_CHECKING:
    from coding_harness.daemon.team.follow_rows import HubSession
    from coding_harness.daemon.team.runner import HubRunner

# What a task from this machine may carry to another runner's session besides its text.
PASSED_OPTIONS = frozenset({"background"})


def local_person(parts: MethodParts) -> str:
    """Who answers at this daemon: its hub person, else the OS user as `user@host`."""
    hub = parts.hub()
    if hub is not None:
        return hub.person
    return f"{getpass.getuser()}@{socket.gethostname()}"


def pick(rows: Sequence[HubSession], wanted: str) -> HubSession | None:
    """The one session of `rows` that `wanted` names; InvalidParams when several fit."""
    exact = [row for row in rows if row.id == wanted]
    if exact:
        return exact[0]
    fits = [row for row in rows if fits_id(row.id, wanted)]
    if len(fits) == 1:
        return fits[0]
    if fits:
        shown = ", ".join(f"{row.id} on {row.runner}" for row in fits[:AMBIGUOUS_SHOWN])
        raise errors.InvalidParams(
            f"{wanted!r} fits several sessions ({shown}); give more of the id"
        )
    return None


async def find(parts: MethodParts, session: Any) -> tuple[HubRunner, HubSession]:
    """The hub session `session` names; SessionNotFound when no runner holds one."""
    wanted = text("session", session)
    missing = f"no session {wanted!r}; `harness sessions` lists them"
    hub = parts.hub()
    if hub is None:
        raise errors.SessionNotFound(missing)
    from coding_harness.daemon.team.connect import HubUnreachable
    from coding_harness.daemon.team.follow_rows import sessions_named

    try:
        async with hub.connection() as db:
            rows = await sessions_named(db, wanted, besides=hub.name)
    except HubUnreachable as exc:
        raise errors.SessionNotFound(f"{missing}; the hub was not asked: {exc}") from None
    found = pick(rows, wanted)
    if found is None:
        raise errors.SessionNotFound(f"{missing}, and no runner of {hub.describe()} holds it")
    return hub, found


def elsewhere(found: HubSession) -> str:
    return f"session {found.id} runs on runner {found.runner} (person {found.person})"


async def _send(
    parts: MethodParts, session: Any, kind: str, body: dict[str, Any]
) -> dict[str, Any]:
    hub, found = await find(parts, session)
    from coding_harness.daemon.team.connect import HubUnreachable
    from coding_harness.daemon.team.inbox_send import NotDelivered, send

    try:
        return await send(hub, to=found.runner, session_id=found.id, kind=kind, body=body)
    except NotDelivered as exc:
        raise errors.HubUnavailable(
            f"{elsewhere(found)}; {exc}: is its daemon running? `harness sessions --hub` shows it"
        ) from None
    except HubUnreachable as exc:
        raise errors.HubUnavailable(f"{elsewhere(found)}, not reached: {exc}") from None


async def submit(
    parts: MethodParts, session: Any, prompt: str, opts: dict[str, Any]
) -> dict[str, Any]:
    """`session.submit` on another runner's session: its text only, run there."""
    if opts.get("yes"):
        raise errors.InvalidParams(
            "auto-approve does not reach another runner's session: its approvals are "
            "answered by people (drop --yes)"
        )
    wider = sorted(set(opts) - PASSED_OPTIONS)
    if wider:
        raise errors.InvalidParams(
            f"only a task's text reaches another runner's session, not {', '.join(wider)}; "
            "run that on the session's own machine"
        )
    return await _send(parts, session, "submit", {"text": prompt})


async def respond(
    parts: MethodParts, session: Any, request: str, decision: Any, reason: Any
) -> dict[str, Any]:
    """`approval.respond` for another runner's session, answered by this daemon's person."""
    body = {
        "request": request,
        "decision": text("decision", decision),
        "reason": text("reason", reason, required=False),
    }
    return await _send(parts, session, "approval", body)


async def cancel(parts: MethodParts, session: Any) -> dict[str, Any]:
    return await _send(parts, session, "cancel", {})


Handler = Callable[..., Awaitable[Any]]


def remote_aware(parts: MethodParts, handler: Handler) -> Handler:
    """`handler`, whose SessionNotFound for a session another runner holds says where it
    runs: one clear line, for the methods that do not reach through the hub."""

    @functools.wraps(handler)
    async def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return await handler(*args, **kwargs)
        except errors.SessionNotFound:
            session = kwargs.get("session")
            if parts.hub() is None or not isinstance(session, str):
                raise
            try:
                _, found = await find(parts, session)
            except errors.RpcError:
                pass
            else:
                raise errors.SessionNotFound(f"{elsewhere(found)}; run that there") from None
            raise

    return call
