"""Queueing a turn on a session held here: `session.submit`'s work, and the hub inbox's.

Both the local method and a task another machine sent through the hub
(`team/inbox_apply.py`) start turns through `start_turn`, so both are checked
and recorded alike.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from coding_harness.daemon.methods.worktree_methods import refuse_gone_worktree
from coding_harness.daemon.sessions.session import Session
from coding_harness.daemon.turns.runner import TurnRunner


def start_turn(
    turns: TurnRunner,
    target: Session,
    prompt: str,
    opts: dict[str, Any],
    release: Callable[[Callable[[], None]], None] | None = None,
) -> dict[str, Any]:
    """Queue a turn on the session: `session.submit`'s work, and the hub inbox's."""
    refuse_gone_worktree(target.id, target.cwd)
    submitted = turns.submit(
        target,
        prompt,
        auto_approve=bool(opts.get("yes")),
        dry_run=bool(opts.get("dry_run")),
        options=opts,
        release=release,
    )
    target.activity.submit(str(submitted["turn"]), background=bool(opts.get("background")))
    return submitted
