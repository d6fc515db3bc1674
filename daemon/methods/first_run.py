"""Provider discovery as the methods use it: `provider.discover`, and the first
run `session.create` makes without a config file.

Both ask the local servers and look at the key variables (`providers/discovery.py`),
with the calling client's variables first, and keep what was found in the config
cache, where it is the default profile until a config file exists. `first_run_note`
is what a new session's client is told: which profile was found and how to keep
it, or, when nothing was, what was tried and which file to write.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from coding_harness.daemon.config.loader import Config, ConfigCache
from coding_harness.daemon.providers.discovery import CONFIG_FILE, Discovery, discover

log = logging.getLogger(__name__)


async def refresh(configs: ConfigCache, cwd: Path, env: dict[str, str]) -> tuple[Config, Discovery]:
    """Discover again, keep the result, and return the workspace's config with it."""
    found = await discover(env, os.environ)
    configs.found = found
    log.info(
        "discovery: %d server(s), %d key(s), chosen %s, in %.3f s",
        len(found.servers),
        len(found.keys),
        found.chosen,
        found.seconds,
    )
    return configs.get(cwd), found


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
