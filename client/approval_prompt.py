"""Asking a person y/n/s for one approval request.

At a terminal it prompts; from a pipe it reads the answer as a line from
standard input (so `echo n | harness -p ...` rejects). `None` means no answer
can come from here (end of input), and the request is left for another
client. The question follows the request's kind: an edit is applied, a
command (`uv run`, `uv sync`; its exact text is the request's summary) is run.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

from .style import Style

ANSWERS = {"y": "yes", "yes": "yes", "n": "no", "no": "no", "s": "skip", "skip": "skip"}
QUESTION = "Apply this change? [y]es / [n]o / [s]kip and tell the model why: "
COMMAND_QUESTION = "Run this command? [y]es / [n]o / [s]kip and tell the model why: "


def question(kind: object) -> str:
    """The question for an `approval.requested` event's `kind` ("edit", "command")."""
    return COMMAND_QUESTION if kind == "command" else QUESTION


def ask(
    style: Style,
    *,
    read_line: Callable[[], str] | None = None,
    stdin: TextIO | None = None,
    kind: object = "edit",
) -> tuple[str, str] | None:
    source = stdin or sys.stdin
    reader = read_line or source.readline
    while True:
        style.stream.write(style.paint(question(kind), "bold"))
        style.stream.flush()
        line = reader()
        if not line:
            style.stream.write("\n")
            return None
        decision = ANSWERS.get(line.strip().lower())
        if decision is None:
            style.line("Please answer y, n or s.")
            continue
        if decision != "skip":
            return decision, ""
        style.stream.write("Reason for the model (one line): ")
        style.stream.flush()
        return decision, reader().strip()
