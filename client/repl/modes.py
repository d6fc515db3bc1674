"""The session's permission mode in the REPL: the prompt's tag, `/mode`'s switch,
`mode.changed` from any client, and the plan offered after a read-only turn.

A read-only turn this REPL submitted that ended well (exit 0) is followed by
one question: "accept the plan? [a]ccept-edits / [y]es (ask) / [n]o". `a` and
`y` switch the session (`session.configure {mode}`) to accept-edits or ask and
submit "carry out the plan"; `n` (or any task typed instead) keeps read-only.
Another terminal on the session is not asked: only the one that asked for the
plan. The mode is changed by the daemon, which tells every client with
`mode.changed`; this REPL shows who changed it and tags its prompt
(`[read-only] > `; nothing in the default `ask`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from coding_harness.protocol import errors, methods
from coding_harness.protocol.client import Connection
from coding_harness.protocol.modes import (
    ACCEPT_EDITS,
    ASK,
    PERMISSION_MODES,
    READ_ONLY,
    modes_sentence,
)

PLAN_QUESTION = "accept the plan? [a]ccept-edits / [y]es (ask) / [n]o: "
PLAN_HINT = "answer a (carry it out, edits applied), y (carry it out, edits asked) or n (keep it)"
PLAN_ANSWERS = {"a": ACCEPT_EDITS, "accept-edits": ACCEPT_EDITS, "y": ASK, "yes": ASK}
PLAN_DECLINED = {"n", "no"}
CARRY_OUT = "carry out the plan"


def session_mode(summary: dict[str, Any]) -> str:
    """The mode a session's summary (create or attach answer) names; ask when none."""
    options = summary.get("options")
    named = summary.get("mode") or (options.get("mode") if isinstance(options, dict) else None)
    return str(named or ASK)


def next_mode(mode: str) -> str:
    """The mode Shift-Tab moves to from `mode`: ask, accept-edits, read-only, ask, ..."""
    at = PERMISSION_MODES.index(mode) if mode in PERMISSION_MODES else -1
    return PERMISSION_MODES[(at + 1) % len(PERMISSION_MODES)]


def cycle(conn: Connection, session: str, keeper: ModeKeeper, say: Callable[..., None]) -> None:
    """Shift-Tab: switch to the next mode (`mode.changed` then says so in every terminal)."""
    try:
        keeper.mode = switch_mode(conn, session, next_mode(keeper.mode))
    except errors.RpcError as exc:
        say(exc.message, "red")


def switch_mode(conn: Connection, session: str, mode: str) -> str:
    """Ask the daemon to switch the session's mode; the mode it is in after."""
    answer = conn.request(methods.SESSION_CONFIGURE, {"session": session, "mode": mode})
    return str(answer.get("options", {}).get("mode") or mode)


class ModeKeeper:
    """What the REPL knows of the mode; shared by the prompt's and the event thread."""

    def __init__(self, mode: str) -> None:
        self._lock = threading.Lock()
        self.mode = mode
        self.offering = False  # a plan waits for the user's a / y / n
        self._own_turns: set[str] = set()

    def tag(self) -> str:
        """What goes before `> ` in the prompt."""
        return "" if self.mode == ASK else f"[{self.mode}] "

    def changed(self, data: dict[str, Any]) -> str:
        """A `mode.changed` event: remember the mode; the line to show."""
        with self._lock:
            self.mode = str(data.get("mode") or self.mode)
        return f"mode: {self.mode} (set by {data.get('client') or 'a client'})"

    def started(self, turn: str, own: bool) -> None:
        with self._lock:
            self.offering = False  # a task typed instead of an answer: the offer lapses
            if own:
                self._own_turns.add(turn)

    def finished(self, turn: str, exit_code: object) -> bool:
        """A turn ended; True when its plan is to be offered (then `offering` is set)."""
        with self._lock:
            own = turn in self._own_turns
            self._own_turns.discard(turn)
            self.offering = own and exit_code == 0 and self.mode == READ_ONLY
            return self.offering

    def answer(self, line: str) -> tuple[str, str]:
        """What a line typed at the plan question does: ("switch", MODE) carries the plan
        out in MODE, ("keep", "") keeps it a plan, ("task", TEXT) is a task typed instead
        (the offer lapses), ("hint", "") asks again."""
        word = line.strip().lower()
        chosen = PLAN_ANSWERS.get(word)
        if chosen is None and word not in PLAN_DECLINED and len(word) <= 3:
            return "hint", ""
        self.offering = False
        if chosen is not None:
            return "switch", chosen
        return ("keep", "") if word in PLAN_DECLINED else ("task", line.strip())


def describe(mode: str) -> str:
    """`/mode` with no argument: the mode and the others."""
    return f"mode: {mode} (the modes are {modes_sentence()}; /mode NAME switches)"
