"""The shell circuit breaker: repeated failures of one shape become a question.

A model that hits a missing program or package keeps varying the command (a
different flag, another package name, another path) while the failure stays
the same. So failures are counted by shape: the tail of the output with
quoted names, paths and numbers replaced by placeholders. At the third
failure of one shape the run_shell result carries a question asking the
model what is missing and whether to drop this approach; that shape's count
then starts again from zero, so the question comes once per streak. A change
to the workspace ends every streak (`reset`): a test run that fails the same
way after each real edit is work, not circling.
"""

from __future__ import annotations

import re

from coding_harness.daemon.agent.seams import ToolCall

SHELL_TOOL = "run_shell"
FAILURE_LIMIT = 3
_TAIL_LINES = 4
_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`|\u2018[^\u2019\n]*\u2019")
_PATH = re.compile(r"(?:[\w.~+-]*/)+[\w.+-]*")
_NUMBER = re.compile(r"\b0x[0-9a-f]+\b|\d+")
_SPACE = re.compile(r"\s+")

QUESTION = (
    "\n\n[harness] {count} commands have now failed in this same way, although the "
    "commands differed. Another variation of the command is unlikely to help. Before the "
    "next call, work out what is actually missing or wrong: a program, a package, a file, "
    "a make target, a permission? Can it be provided from inside this workspace with the "
    "allowed commands? If not, stop trying this approach: take a different one, or tell "
    "the user what is missing and ask them how to proceed."
)


def is_failure(result: str) -> bool:
    """A run_shell result is a success only when it ends with `(exit 0)`."""
    return not result.rstrip().endswith("(exit 0)")


def failure_shape(result: str) -> str:
    """The failure with its particulars (names, paths, numbers) taken out."""
    lines = [line for line in result.strip().splitlines() if line.strip()]
    text = "\n".join(lines[-_TAIL_LINES:]).lower()
    text = _QUOTED.sub("<name>", text)
    text = _PATH.sub("<path>", text)
    text = _NUMBER.sub("<n>", text)
    return _SPACE.sub(" ", text).strip()


class ShellBreaker:
    """Counts run_shell failures by shape within one turn."""

    def __init__(self, limit: int = FAILURE_LIMIT) -> None:
        self.limit = limit
        self._counts: dict[str, int] = {}

    def review(self, call: ToolCall, result: str) -> str:
        """The result to give the model: as it is, or with the question added."""
        if call.name != SHELL_TOOL or not is_failure(result):
            return result
        shape = failure_shape(result)
        count = self._counts.get(shape, 0) + 1
        if count < self.limit:
            self._counts[shape] = count
            return result
        self._counts[shape] = 0
        return result + QUESTION.format(count=_spelled(count))

    def reset(self) -> None:
        """Forget every streak (the workspace changed)."""
        self._counts.clear()


def _spelled(count: int) -> str:
    words = {3: "Three", 4: "Four", 5: "Five"}
    return words.get(count, str(count))
