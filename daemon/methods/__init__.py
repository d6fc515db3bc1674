"""The JSON-RPC methods the daemon serves, one module per area.

Each area's module holds its handlers as plain functions and names them in its
`HANDLERS` table. A handler takes the `MethodParts` (`parts.py`: what the
handlers may reach), the calling `Connection` and the request's named params,
and returns a JSON-ready result or raises an `RpcError`. `build_methods`
registers every area's handlers, bound to one `MethodParts`, on one
`MethodTable`. Helpers more than one area uses live in `params.py` (checks of
request params), `lookup.py` (a request's session and profile) and
`first_run.py` (provider discovery).
"""

from __future__ import annotations

from functools import partial

from coding_harness.daemon.methods import (
    approval_methods,
    configure_methods,
    context_methods,
    daemon_methods,
    discovery_methods,
    hub_methods,
    mcp_methods,
    memory_methods,
    model_methods,
    provider_methods,
    queue_methods,
    remote_sessions,
    session_admin,
    session_methods,
    undo_methods,
    window_methods,
    worktree_methods,
)
from coding_harness.daemon.methods.parts import MethodParts
from coding_harness.daemon.server.rpc import Handler, MethodTable

AREAS: tuple[dict[str, Handler], ...] = (
    daemon_methods.HANDLERS,
    session_methods.HANDLERS,
    session_admin.HANDLERS,
    configure_methods.HANDLERS,
    approval_methods.HANDLERS,
    provider_methods.HANDLERS,
    model_methods.HANDLERS,
    discovery_methods.HANDLERS,
    context_methods.HANDLERS,
    memory_methods.HANDLERS,
    undo_methods.HANDLERS,
    mcp_methods.HANDLERS,
    window_methods.HANDLERS,
    worktree_methods.HANDLERS,
    hub_methods.HANDLERS,
    queue_methods.HANDLERS,
)
DETACHED = (
    context_methods.DETACHED
    | hub_methods.DETACHED
    | queue_methods.DETACHED
    | mcp_methods.DETACHED
    | model_methods.DETACHED
    | window_methods.DETACHED
)

__all__ = ["MethodParts", "build_methods"]


def build_methods(parts: MethodParts) -> MethodTable:
    table = MethodTable()
    for handlers in AREAS:
        for name, handler in handlers.items():
            bound = remote_sessions.remote_aware(parts, partial(handler, parts))
            table.register(name, detached=name in DETACHED)(bound)
    return table
