"""`/map` in the REPL: the repo map the session's next coding turn carries.

It asks `session.map` and prints a one-line header (`repo map: 812 of 1,024
tokens, 9 files indexed`), then the map as plain text on standard output: the
map is made of the repository's own lines, so it is made `visible` and never
read as markup. While the code index builds, while the map is off
(`agent.repo_map_tokens` is 0) or when the build failed, the header alone says
so (`render/index_lines.py`).
"""

from __future__ import annotations

from coding_harness.client.render.index_lines import map_header
from coding_harness.client.render.sanitize import visible
from coding_harness.client.repl.session_command import SessionCommand
from coding_harness.protocol import methods

USAGE = "the repo map the next coding turn is shown (the code index's ranked definitions)"


class MapCommand(SessionCommand):
    def __call__(self, argument: str) -> None:
        if argument:
            self.style.line("usage: /map (it takes no argument)", "yellow")
            return
        answer = self.conn.request(methods.SESSION_MAP, {"session": self.session})
        header, color = map_header(answer)
        self.style.line(header, color)
        text = str(answer.get("map") or "") if answer.get("state") == "ready" else ""
        if text.strip():
            print(visible(text.rstrip("\n")), flush=True)
