"""Asking a person y/n/s (and r for an edit) for one approval request.

At a terminal it prompts; from a pipe it reads the answer as a line from
standard input (so `echo n | harness -p ...` rejects). `None` means no answer
can come from here (end of input), and the request is left for another
client. The question follows the request's kind: an edit is applied, a
command (`uv run`, `uv sync`; its exact text is the request's summary) is run.
An edit has a fourth answer, `[r]evert`: apply it, and put the file back if
the check then fails. It is chosen in this one prompt, so nothing is asked
after the check (and a pipe, which gives one answer, can choose it too).
A command that names what an "always" would allow (the request's `allow`:
`uv run`, `make clean`, an MCP tool) has a fourth answer too, `[a]lways`: yes,
and that command runs unasked for the rest of the session (`/allow-cmd ...
--save` keeps it for every session). The functions below take the request's
data (or, as before, just its kind).
While the question waits, another client may answer it: the reader then raises
`answer_wait.AnsweredElsewhere`, the prompt's line is ended, and the caller says
who answered.
Left unanswered for `notify.after_seconds`, the question rings the terminal
bell once and says it is still waiting (`bell.py`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

from coding_harness.client.render.sanitize import field
from coding_harness.client.render.style import Style
from coding_harness.client.session.bell import BellSettings, bell_settings, reminding

ANSWERS = {"y": "yes", "yes": "yes", "n": "no", "no": "no", "s": "skip", "skip": "skip"}
EDIT_ANSWERS = {**ANSWERS, "r": "revert", "revert": "revert"}
ALWAYS_ANSWERS = {**ANSWERS, "a": "always", "always": "always"}
COMMAND_QUESTION = "Run this command? [y]es / [n]o / [s]kip and tell the model why: "
ALWAYS_QUESTION = (
    "Run this command? [y]es / [n]o / [s]kip and tell the model why"
    " / [a]lways allow `{allow}` in this session: "
)
QUESTION = (
    "Apply this change? [y]es / [n]o / [s]kip and tell the model why"
    " / [r]evert it if the check fails: "
)
COMMAND_HINT = "Please answer y, n or s."
ALWAYS_HINT = "Please answer y, n, s or a."
EDIT_HINT = "Please answer y, n, s or r."


def _shape(request: object) -> tuple[object, str]:
    """(kind, allow entry) of a request's data, or of a bare kind."""
    if not isinstance(request, dict):
        return request, ""
    allow = request.get("allow")
    entry = " ".join(allow.split()) if isinstance(allow, str) else ""
    return request.get("kind"), entry if request.get("kind") == "command" else ""


def question(request: object) -> str:
    """The question for an `approval.requested` event's data (or its `kind`)."""
    kind, allow = _shape(request)
    if allow:
        return ALWAYS_QUESTION.format(allow=field(allow))
    return COMMAND_QUESTION if kind == "command" else QUESTION


def answers(request: object) -> dict[str, str]:
    """What a typed answer means for a request: r (revert) is for edits, a (always) for
    commands that name what it allows."""
    kind, allow = _shape(request)
    if allow:
        return ALWAYS_ANSWERS
    return ANSWERS if kind == "command" else EDIT_ANSWERS


def hint(request: object) -> str:
    """The line shown after an answer the question does not offer."""
    kind, allow = _shape(request)
    if allow:
        return ALWAYS_HINT
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
    """The answer, or None at end of input. `kind` is the request's data (or its kind);
    `bell`: when and whether to ring (default: as the config files of this folder say);
    `session` is named when it rings. `AnsweredElsewhere` from `read_line` ends the
    question's line and is raised on."""
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
        line = _read(style, reader)
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
        return decision, _read(style, reader).strip()


def _read(style: Style, reader: Callable[[], str]) -> str:
    """A line from `reader`; the question's line is ended when it is withdrawn."""
    try:
        return reader()
    except Exception:  # AnsweredElsewhere (or a lost connection): the question goes
        style.stream.write("\n")
        style.stream.flush()
        raise
