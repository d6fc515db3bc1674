"""`provider.discover`: look for local servers and key variables again (`first_run.py`).

The calling client's variables come first; what is found is kept in the config
cache, where it is the default profile until a config file exists.
"""

from __future__ import annotations

from typing import Any

from coding_harness.daemon.methods.first_run import refresh
from coding_harness.daemon.methods.params import env_map, text, workspace_folder
from coding_harness.daemon.methods.parts import MethodParts
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.server.rpc import Handler
from coding_harness.protocol import methods as m


async def provider_discover(
    parts: MethodParts, conn: Connection, env: Any = None, cwd: Any = None
) -> dict[str, Any]:
    folder = workspace_folder(text("cwd", cwd)) if cwd is not None else parts.home
    config, found = await refresh(parts.configs, folder, env_map(env))
    return {
        **found.to_wire(),
        "chosen": config.discovered,
        "config_exists": not config.discoverable,
        "default": config.default_provider,
    }


HANDLERS: dict[str, Handler] = {m.PROVIDER_DISCOVER: provider_discover}
