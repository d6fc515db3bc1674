"""`provider.window`: the context window a profile's model gets, as its server tells it.

For a session (its profile and model) or a folder's default profile (or the one
named): the figure, where it came from, whether it counts as small, and the
advice when it is too small to be useful (`context/window_fit.py`). `harness
doctor`, the REPL's banner and `/context` show it.
"""

from __future__ import annotations

import os
from typing import Any

from coding_harness.daemon.context.window_fit import raise_advice, window_for
from coding_harness.daemon.methods.lookup import profile_of, session_of, session_profile
from coding_harness.daemon.methods.params import optional_text, text, workspace_folder
from coding_harness.daemon.methods.parts import MethodParts
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.server.rpc import Handler
from coding_harness.daemon.turns.assemble import api_key
from coding_harness.protocol import errors
from coding_harness.protocol import methods as m


async def provider_window(
    parts: MethodParts,
    conn: Connection,
    session: Any = None,
    cwd: Any = None,
    provider: Any = None,
    env: Any = None,
) -> dict[str, Any]:
    if session is not None:
        target = session_of(parts, session)
        config = parts.configs.get(target.cwd)
        profile = session_profile(parts, target)
        key = api_key(target, profile)
    else:
        folder = workspace_folder(text("cwd", cwd)) if cwd is not None else parts.home
        config = parts.configs.get(folder)
        profile = profile_of(config, optional_text("provider", provider))
        if env is not None and not isinstance(env, dict):
            raise errors.InvalidParams("env must be an object of variable names and values")
        sent = env or {}
        variable = profile.api_key_env
        key = (sent.get(variable) or os.environ.get(variable)) if variable else None
    window = await window_for(parts.turns.facts, profile, config, key)
    return {
        "provider": profile.name,
        "model": profile.model,
        **window.to_wire(),
        "advice": raise_advice(window, profile),
    }


HANDLERS: dict[str, Handler] = {m.PROVIDER_WINDOW: provider_window}
# May wait on a slow model server: the connection goes on answering meanwhile.
DETACHED = frozenset({m.PROVIDER_WINDOW})
