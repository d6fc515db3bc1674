"""`/worktree [list] | diff ID | merge ID | rm ID [--force]` in the REPL: `harness
worktree` over the REPL's own connection (ID: a worktree's name or its session's
id). Merging or removing the worktree of the REPL's own session while a turn
runs in it is refused by the daemon, as from any other client.
"""

from __future__ import annotations

from types import SimpleNamespace

from coding_harness.client.commands.worktree import run
from coding_harness.client.render.style import Style
from coding_harness.protocol.client import Connection

USAGE = "/worktree [list] | diff ID | merge ID | rm ID [--force]: the sessions' git worktrees"
_ACTIONS = {"list": "list", "diff": "diff", "merge": "merge", "rm": "rm", "remove": "rm"}


class WorktreeCommand:
    def __init__(self, conn: Connection, style: Style) -> None:
        self.conn = conn
        self.style = style

    def __call__(self, argument: str) -> None:
        words = argument.split()
        action = _ACTIONS.get(words[0] if words else "list")
        force = "--force" in words[1:]
        ids = [w for w in words[1:] if w != "--force"]
        wanted_id = action not in (None, "list")
        if action is None or len(ids) != int(wanted_id) or (force and action != "rm"):
            self.style.line(f"usage: {USAGE}", "red")
            return
        run(self.conn, action, ids[0] if ids else "", SimpleNamespace(force=force), self.style)
