"""`initialize {session}`: create or join a session in the same request.

A one-shot client would otherwise spend three round trips (`initialize`,
`session.create`, `session.attach`) before it can submit. The work is done by
`session_methods`' own handlers, taken as written from a table of their own, so
the combined form answers as the separate requests would: the same result
(`session.create`'s, plus `last_seq`; or `session.attach`'s), the same errors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coding_harness.daemon.methods import session_methods
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.server.rpc import Handler, MethodTable
from coding_harness.protocol import errors
from coding_harness.protocol import methods as m

if TYPE_CHECKING:
    from collections.abc import Callable

    from coding_harness.daemon.app import Daemon

# What `session: {...}` may hold to create a session: session.create's params.
CREATE_KEYS = ("cwd", "provider", "model", "options", "env")
SHAPE = (
    "session must be {cwd, provider?, model?, options?, env?} to create one, or {id} to join one"
)


class _KeptTable(MethodTable):
    """A method table that also keeps each handler as written, to be called directly."""

    def __init__(self) -> None:
        super().__init__()
        self.handlers: dict[str, Handler] = {}

    def register(self, name: str, *, detached: bool = False) -> Callable[[Handler], Handler]:
        adapt = super().register(name, detached=detached)

        def keep(handler: Handler) -> Handler:
            self.handlers[name] = handler
            return adapt(handler)

        return keep


class SessionOpener:
    """Creates or joins the session an `initialize` names, attached to its connection."""

    def __init__(self, daemon: Daemon) -> None:
        kept = _KeptTable()
        session_methods.register(kept, daemon)
        self._create = kept.handlers[m.SESSION_CREATE]
        self._attach = kept.handlers[m.SESSION_ATTACH]

    async def open(self, conn: Connection, spec: Any) -> dict[str, Any]:
        if not isinstance(spec, dict):
            raise errors.InvalidParams(SHAPE)
        if "id" in spec:
            if set(spec) != {"id"}:
                raise errors.InvalidParams(f"{SHAPE}; id goes alone")
            joined: dict[str, Any] = await self._attach(conn, session=spec["id"])
            return joined
        unknown = sorted(set(spec) - set(CREATE_KEYS))
        if unknown:
            raise errors.InvalidParams(f"{SHAPE}; unknown: {', '.join(map(str, unknown))}")
        params = {key: spec[key] for key in CREATE_KEYS if key in spec}
        created: dict[str, Any] = await self._create(conn, **{"cwd": None, **params})
        attached = await self._attach(conn, session=created["session"])
        return {**created, "last_seq": attached.get("last_seq", 0)}
