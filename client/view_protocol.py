"""The seam between the printer (what to show) and a view (how it looks).

Imported for type checking only: creating a `Protocol` class costs about a
millisecond, which the one-shot path does not pay.
"""

from __future__ import annotations

from typing import Protocol


class View(Protocol):
    def busy(self, label: str) -> None: ...

    def waiting(self, seconds: float, done: bool) -> None: ...

    def reply_delta(self, text: str) -> None: ...

    def reasoning_delta(self, text: str) -> None: ...

    def line(self, text: str, style: str = "") -> None: ...

    def diff(self, diff: str, path: str, new_file: bool) -> None: ...

    def pause(self) -> None: ...

    def turn_done(self, reply: str, exit_code: int) -> None: ...
