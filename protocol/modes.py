"""The permission modes of a session, spelled once for both sides.

`ask` puts every write to the people on the session (the default),
`accept-edits` applies writes inside the workspace without asking (diffs are
still shown; commands keep their own approval rules), `read-only` offers the
model no write tool and lets run_shell run only commands that change nothing.
The client offers these names (`--mode`, `/mode`, ACP) and the daemon checks
them (`session.configure`, `agent.mode`).
"""

from __future__ import annotations

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

ASK: Final = "ask"
ACCEPT_EDITS: Final = "accept-edits"
READ_ONLY: Final = "read-only"
PERMISSION_MODES: Final[tuple[str, ...]] = (ASK, ACCEPT_EDITS, READ_ONLY)
DEFAULT_MODE: Final = ASK

# One line per mode, for `/mode`, `--help` and an editor's mode picker.
MODE_DESCRIPTIONS: Final = {
    ASK: "every write is put to you first",
    ACCEPT_EDITS: "writes inside the workspace are applied without asking; commands still ask",
    READ_ONLY: "no writes, only commands that change nothing: the agent ends with a plan",
}


def mode_named(word: object) -> str | None:
    """`word` as a permission mode (any case, `_` for `-`), or None when it names none."""
    if not isinstance(word, str):
        return None
    chosen = word.strip().lower().replace("_", "-")
    return chosen if chosen in PERMISSION_MODES else None


def modes_sentence() -> str:
    """`ask, accept-edits or read-only`, for error messages."""
    return f"{', '.join(PERMISSION_MODES[:-1])} or {PERMISSION_MODES[-1]}"
