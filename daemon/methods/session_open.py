"""`initialize {session}`: create or join a session in the same request, and
start its first turn there too.

A one-shot client would otherwise spend three round trips (`initialize`,
`session.create`, `session.attach`) before it can submit, and a fourth for the
submit. The work is done by `session_methods`' own handlers, called as
written, so the combined form answers as the separate requests would: the same
result (`session.create`'s, plus `last_seq`; or `session.attach`'s), the same
errors. A `submit` in a create starts the turn only when the client has already
looked up every key variable the session names (`env_names`); otherwise, or
when the submit is refused, `turn` is null and the client submits as before.
"""

from __future__ import annotations

import logging
from typing import Any

from coding_harness.daemon.methods.parts import MethodParts
from coding_harness.daemon.methods.session_methods import (
    session_attach,
    session_create,
    session_submit,
)
from coding_harness.daemon.server.connection import Connection
from coding_harness.protocol import errors

log = logging.getLogger(__name__)

# What `session: {...}` may hold to create a session: session.create's params, and the
# first turn to start.
CREATE_KEYS = ("cwd", "provider", "model", "options", "env", "worktree")
SUBMIT_KEYS = ("text", "options", "env_names")
SHAPE = (
    "session must be {cwd, provider?, model?, options?, env?, worktree?, submit?} to create one, "
    "or {id} to join one"
)
SUBMIT_SHAPE = "session.submit must be {text, options?, env_names?: [names]}"


async def open_session(parts: MethodParts, conn: Connection, spec: Any) -> dict[str, Any]:
    """Create or join the session an `initialize` names, attached to its connection."""
    if not isinstance(spec, dict):
        raise errors.InvalidParams(SHAPE)
    if "id" in spec:
        if set(spec) != {"id"}:
            raise errors.InvalidParams(f"{SHAPE}; id goes alone")
        return await session_attach(parts, conn, session=spec["id"])
    unknown = sorted(set(spec) - {*CREATE_KEYS, "submit"})
    if unknown:
        raise errors.InvalidParams(f"{SHAPE}; unknown: {', '.join(map(str, unknown))}")
    submit = _submit_spec(spec.get("submit"))
    params = {key: spec[key] for key in CREATE_KEYS if key in spec}
    created = await session_create(parts, conn, **{"cwd": None, **params})
    attached = await session_attach(parts, conn, session=created["session"])
    opened = {**created, "last_seq": attached.get("last_seq", 0)}
    if submit is not None:
        opened["turn"] = await _first_turn(parts, conn, created, submit)
    return opened


def _submit_spec(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) - set(SUBMIT_KEYS) or "text" not in value:
        raise errors.InvalidParams(SUBMIT_SHAPE)
    names = value.get("env_names", [])
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise errors.InvalidParams(f"{SUBMIT_SHAPE}; env_names must be a list of names")
    return value


async def _first_turn(
    parts: MethodParts, conn: Connection, created: dict[str, Any], submit: dict[str, Any]
) -> dict[str, Any] | None:
    """session.submit's result for the new session, or None for the client to submit
    itself: a key the session may need was not looked up, or the submit was refused
    (the client's own submit then hears why)."""
    if not set(created["key_env"]) <= set(submit.get("env_names", [])):
        return None
    try:
        return await session_submit(
            parts,
            conn,
            session=created["session"],
            text=submit["text"],
            options=submit.get("options"),
        )
    except errors.RpcError as exc:
        log.debug("the first turn was not started with the session: %s", exc.message)
        return None
