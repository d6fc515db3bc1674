"""A fake model server that answers several sessions at once, each from its own script
(the worktree tests'; `routed_model.py` is the background tests' own).

`RoutedModelServer(routes={"task alpha": [...], ...})` picks the script by a key
found in the request's first user message, so turns running side by side get
their own answers whatever order their requests arrive in. The notes calls
after a turn are answered as `FakeModelServer` answers them.
"""

from __future__ import annotations

from typing import Any

from tests.support.fake_model_server import FakeModelServer, Fault, Scripted
from tests.support.notes_requests import is_notes_request


class RoutedModelServer(FakeModelServer):
    def __init__(self, routes: dict[str, list[Scripted]]) -> None:
        super().__init__()
        self.routes = routes  # the caller's: it may fill it in after the server starts

    def _next(self, payload: dict[str, Any]) -> Scripted:
        if is_notes_request(payload):
            return super()._next(payload)
        with self._lock:
            self.requests.append(payload)
            asked = next(
                (str(m.get("content")) for m in payload.get("messages", []) if m["role"] == "user"),
                "",
            )
            for key, script in self.routes.items():
                if key in asked and script:
                    return script.pop(0)
        return Fault(500, '{"error": {"message": "routed fake server: nothing scripted"}}')
