"""Asking a person y/n/s (and r for an edit) for one approval request.

At a terminal it prompts; from a pipe it reads the answer as a line from
standard input (so `echo n | harness -p ...` rejects). `None` means no answer
can come from here (end of input), and the request is left for another
client. The question follows the request's kind: an edit is applied, a
command (`uv run`, `uv sync`; its exact text is the request's summary) is run.
An edit has a fourth answer, `[r]evert`: apply it, and put the file back if
`make check` then fails. It is chosen in this one prompt, so nothing is asked
after the check (and a pipe, which gives one answer, can choose it too).
Left unanswered for `notify.after_seconds`, the question rings the terminal
bell once and says it is still waiting (`bell.py`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

from coding_harness.client.render.style import Style
from coding_harness.client.session.bell import BellSettings, bell_settings, reminding

ANSWERS = {"y": "yes", "yes": "yes", "n": "no", "no": "no", "s": "skip", "skip": "skip"}
EDIT_ANSWERS = {**ANSWERS, "r": "revert", "revert": "revert"}
COMMAND_QUESTION = "Run this command? [y]es / [n]o / [s]kip and tell the model why: "
QUESTION = (
    "Apply this change? [y]es / [n]o / [s]kip and tell the model why"
    " / [r]evert it if make check fails: "
)
COMMAND_HINT = "Please answer y, n or s."
EDIT_HINT = "Please answer y, n, s or r."


def question(kind: object) -> str:
    """The question for an `approval.requested` event's `kind` ("edit", "command")."""
    return COMMAND_QUESTION if kind == "command" else QUESTION


def answers(kind: object) -> dict[str, str]:
    """What a typed answer means for a request of `kind`: r (revert) is for edits only."""
    return ANSWERS if kind == "command" else EDIT_ANSWERS


def hint(kind: object) -> str:
    """The line shown after an answer the question does not offer."""
    return COMMAND_HINT if kind == "command" else EDIT_HINT


def ask(
    style: Style,
    *,
    read_line: Callable[[], str] | None = None,
    stdin: TextIO | None = None,
    kind: object = "edit",
    bell: BellSettings | None = None,
    session: str | None = None,
) -> tuple[str, str] | None:
    """The answer, or None at end of input. `bell`: when and whether to ring (default:
    as the config files of this folder say); `session` is named when it rings."""
    with reminding(bell or bell_settings(), lambda: _still_waiting(style, kind, session)):
        return _ask(style, read_line or (stdin or sys.stdin).readline, kind)


def _still_waiting(style: Style, kind: object, session: str | None) -> None:
    """Said (on the timer's thread) when the question has waited `after_seconds`."""
    where = f" in session {session}" if session else ""
    style.stream.write("\n")
    style.line(f"an approval{where} is still waiting for your answer", "yellow")
    style.stream.write(style.paint(question(kind), "bold"))
    style.stream.flush()


def _ask(style: Style, reader: Callable[[], str], kind: object) -> tuple[str, str] | None:
    while True:
        style.stream.write(style.paint(question(kind), "bold"))
        style.stream.flush()
        line = reader()
        if not line:
            style.stream.write("\n")
            return None
        decision = answers(kind).get(line.strip().lower())
        if decision is None:
            style.line(hint(kind))
            continue
        if decision != "skip":
            return decision, ""
        style.stream.write("Reason for the model (one line): ")
        style.stream.flush()
        return decision, reader().strip()
