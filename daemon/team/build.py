"""The runner assembled: which parts a daemon on a hub runs.

The composition root calls `build_runner` when the global file names a hub;
each part of the runner is added here, in one place, given what it needs of
the daemon (`RunnerDeps`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from coding_harness.daemon.config.hub_settings import HubSettings
from coding_harness.daemon.config.loader import ConfigCache
from coding_harness.daemon.sessions.session import SessionTable
from coding_harness.daemon.store.db import Store
from coding_harness.daemon.team.inbox import Inbox
from coding_harness.daemon.team.mirror import Mirror
from coding_harness.daemon.team.queue import TaskQueue
from coding_harness.daemon.team.runner import HubRunner
from coding_harness.daemon.turns.runner import TurnRunner


@dataclass(kw_only=True, slots=True, frozen=True)
class RunnerDeps:
    """What the runner's parts may reach of the daemon."""

    home: Path
    state_dir: Path
    sessions: SessionTable
    configs: ConfigCache
    turns: TurnRunner
    store: Callable[[], Store]


def build_runner(settings: HubSettings, deps: RunnerDeps) -> HubRunner:
    runner = HubRunner(settings)
    runner.add(Mirror(deps))  # every session of this daemon, copied to the hub
    runner.add(Inbox(deps))  # what people on other machines send this daemon's sessions
    runner.add(TaskQueue(deps))  # queued tasks this runner claims and runs
    return runner
