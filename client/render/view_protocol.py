"""The seam between the printer (what to show) and a view (how it looks).

Imported for type checking only: creating a `Protocol` class costs about a
millisecond, which the one-shot path does not pay.
"""

from __future__ import annotations

from typing import Protocol


class View(Protocol):
    def busy(self, label: str) -> None: ...

    def step(self, label: str) -> None:
        """A step that may take a while began (`running make check`): the spinner says
        it, with its time, at a terminal; off one, a line does."""
        ...

    def end_busy(self, label: str, then: str | None) -> None:
        """The state `label` named ended: if the spinner still says it, it says `then`
        instead, or stops (None)."""
        ...

    def waiting(self, seconds: float, done: bool) -> None: ...

    def reply_delta(self, text: str) -> None: ...

    def interim_text(self) -> str:
        """Answer text not shown yet, taken (cleared): the model's words before a tool
        call, which a view that shows the reply only at the end would lose."""
        ...

    def reasoning_delta(self, text: str) -> None: ...

    def line(self, text: str, style: str = "") -> None: ...

    def diff(self, diff: str, path: str, new_file: bool) -> None: ...

    def pause(self) -> None: ...

    def turn_done(self, reply: str, exit_code: int) -> None: ...
