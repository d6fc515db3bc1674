"""`/undo [TURN] [--force]` and `/checkpoints` in the REPL: `harness undo` for this session.

They print what `harness undo` prints (the diff put back, the files refused and
how to get past that), over the REPL's own connection.
"""

from __future__ import annotations

import sys
from typing import Any

from coding_harness.client.commands.undo import show_checkpoints, show_undo
from coding_harness.client.render.style import Style
from coding_harness.client.repl.session_command import SessionCommand
from coding_harness.protocol import methods

USAGE = "/undo [TURN] [--force]: put back what the last turn (or TURN and later) wrote"


class UndoCommands(SessionCommand):
    def undo(self, argument: str) -> None:
        words = argument.split()
        force = "--force" in words
        turns = [w for w in words if w != "--force"]
        if len(turns) > 1 or any(w.startswith("-") for w in turns):
            self.style.line(f"usage: {USAGE}", "red")
            return
        params: dict[str, Any] = {"session": self.session, "force": force}
        if turns:
            params["turn"] = turns[0]
        show_undo(self.conn.request(methods.SESSION_UNDO, params), self.style)

    def checkpoints(self, _: str) -> None:
        listing = self.conn.request(methods.SESSION_CHECKPOINTS, {"session": self.session})
        show_checkpoints(listing, self.session, Style(sys.stdout))
