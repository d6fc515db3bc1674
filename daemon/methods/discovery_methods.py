"""`provider.discover`, and the first-run discovery `session.create` runs without a config.

Both ask the local servers and look at the key variables (`provider_discovery`), with
the calling client's variables first, and keep what was found in the config cache,
where it is the default profile until a config file exists. `first_run_note` is
what a new session's client is told: which profile was found and how to keep it, or,
when nothing was, what was tried and which file to write.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coding_harness.daemon.config.loader import Config
from coding_harness.daemon.methods.params import env_map, text, workspace_folder
from coding_harness.daemon.providers.discovery import CONFIG_FILE, Discovery, discover
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.server.rpc import MethodTable
from coding_harness.protocol import methods as m

if TYPE_CHECKING:
    from coding_harness.daemon.app import Daemon

log = logging.getLogger(__name__)


async def refresh(daemon: Daemon, cwd: Path, env: dict[str, str]) -> tuple[Config, Discovery]:
    """Discover again, keep the result, and return the workspace's config with it."""
    found = await discover(env, os.environ)
    daemon.configs.found = found
    log.info(
        "discovery: %d server(s), %d key(s), chosen %s, in %.3f s",
        len(found.servers),
        len(found.keys),
        found.chosen,
        found.seconds,
    )
    return daemon.configs.get(cwd), found


def first_run_note(config: Config, found: Discovery) -> dict[str, Any]:
    """The create result's `discovered` (None when nothing was) and `notice`."""
    chosen = config.discovered
    if chosen is None:
        return {"discovered": None, "notice": found.nothing_found()}
    profile = config.providers[chosen]
    message = (
        f"no config file: using {chosen} · {profile.model} ({found.source(chosen)}); "
        f"to keep it, save it to {CONFIG_FILE} (the REPL offers to), "
        "`harness doctor` lists what else was found"
    )
    return {
        "discovered": {
            "profile": chosen,
            "model": profile.model,
            "source": found.source(chosen),
            "config": found.profiles()[chosen],
            "config_file": CONFIG_FILE,
        },
        "notice": message,
    }


def register(table: MethodTable, daemon: Daemon) -> None:
    @table.register(m.PROVIDER_DISCOVER)
    async def provider_discover(
        conn: Connection, env: Any = None, cwd: Any = None
    ) -> dict[str, Any]:
        folder = workspace_folder(text("cwd", cwd)) if cwd is not None else daemon.home
        config, found = await refresh(daemon, folder, env_map(env))
        return {
            **found.to_wire(),
            "chosen": config.discovered,
            "config_exists": not config.discoverable,
            "default": config.default_provider,
        }
