"""The JSON-RPC methods the daemon serves, one module per area.

`build_methods` registers them all on one `MethodTable`; each area's
`register(table, daemon)` adds its handlers. A handler takes the calling
`Connection` and the request's named params and returns a JSON-ready result
or raises an `RpcError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coding_harness.daemon.methods import (
    approval_methods,
    context_methods,
    daemon_methods,
    discovery_methods,
    memory_methods,
    provider_methods,
    session_methods,
)
from coding_harness.daemon.server.rpc import MethodTable

if TYPE_CHECKING:
    from coding_harness.daemon.app import Daemon


def build_methods(daemon: Daemon) -> MethodTable:
    table = MethodTable()
    for area in (
        daemon_methods,
        session_methods,
        approval_methods,
        provider_methods,
        discovery_methods,
        context_methods,
        memory_methods,
    ):
        area.register(table, daemon)
    return table
