"""The session's permission mode as ACP session modes.

A session opened by `session/new`, `session/load` or `session/resume` answers
with `modes`: ask, accept-edits and read-only (`protocol/modes.py`), the current
one being the daemon session's. `session/set_mode` is `session.configure {mode}`
(the daemon refuses an unknown mode with -32602 naming the modes), and every
`mode.changed` event, whoever made the change (this editor, a terminal on the
same session), reaches the editor as a `current_mode_update`.
"""

from __future__ import annotations

from typing import Any

from acp import schema

from coding_harness.protocol.modes import DEFAULT_MODE, MODE_DESCRIPTIONS, PERMISSION_MODES

NAMES = {"ask": "Ask", "accept-edits": "Accept edits", "read-only": "Read-only (plan)"}


def mode_state(current: object) -> schema.SessionModeState:
    """The modes an editor may choose from, and the session's own."""
    modes = [
        schema.SessionMode(id=mode, name=NAMES.get(mode, mode), description=MODE_DESCRIPTIONS[mode])
        for mode in PERMISSION_MODES
    ]
    chosen = current if isinstance(current, str) and current in PERMISSION_MODES else DEFAULT_MODE
    return schema.SessionModeState(current_mode_id=chosen, available_modes=modes)


def summary_mode(summary: dict[str, Any]) -> object:
    """The mode a `session.create` or `session.attach` answer names."""
    options = summary.get("options")
    return summary.get("mode") or (options.get("mode") if isinstance(options, dict) else None)


def mode_update(data: dict[str, Any]) -> schema.CurrentModeUpdate:
    """A `mode.changed` event's data as the editor's session update."""
    return schema.CurrentModeUpdate(
        session_update="current_mode_update", current_mode_id=str(data.get("mode") or "")
    )
