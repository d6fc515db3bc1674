"""`initialize {session}`: create or join a session in the same request.

A one-shot client would otherwise spend three round trips (`initialize`,
`session.create`, `session.attach`) before it can submit. The work is done by
`session_methods`' own handlers, called as written, so the combined form
answers as the separate requests would: the same result (`session.create`'s,
plus `last_seq`; or `session.attach`'s), the same errors.
"""

from __future__ import annotations

from typing import Any

from coding_harness.daemon.methods.parts import MethodParts
from coding_harness.daemon.methods.session_methods import session_attach, session_create
from coding_harness.daemon.server.connection import Connection
from coding_harness.protocol import errors

# What `session: {...}` may hold to create a session: session.create's params.
CREATE_KEYS = ("cwd", "provider", "model", "options", "env")
SHAPE = (
    "session must be {cwd, provider?, model?, options?, env?} to create one, or {id} to join one"
)


async def open_session(parts: MethodParts, conn: Connection, spec: Any) -> dict[str, Any]:
    """Create or join the session an `initialize` names, attached to its connection."""
    if not isinstance(spec, dict):
        raise errors.InvalidParams(SHAPE)
    if "id" in spec:
        if set(spec) != {"id"}:
            raise errors.InvalidParams(f"{SHAPE}; id goes alone")
        return await session_attach(parts, conn, session=spec["id"])
    unknown = sorted(set(spec) - set(CREATE_KEYS))
    if unknown:
        raise errors.InvalidParams(f"{SHAPE}; unknown: {', '.join(map(str, unknown))}")
    params = {key: spec[key] for key in CREATE_KEYS if key in spec}
    created = await session_create(parts, conn, **{"cwd": None, **params})
    attached = await session_attach(parts, conn, session=created["session"])
    return {**created, "last_seq": attached.get("last_seq", 0)}
