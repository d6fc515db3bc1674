"""Progress detection: a turn whose tool calls stopped changing anything is stopped.

A model can stay calm and error-free while achieving nothing: reading the same
files, listing folders, running checks. What separates that from slow work is
whether the workspace changes. After each round of tool calls the loop asks a
probe (normally `fingerprint.workspace_probe`) for a cheap fingerprint, off
the event loop; `limit` rounds in a row with an unchanged fingerprint mean
the turn is stopped with an explanation.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Hashable

log = logging.getLogger(__name__)

STALL_LIMIT = 8

NO_PROGRESS = (
    "Stopped: {count} rounds of tool calls in a row left the workspace exactly as it "
    "was, so the model seems to be going round in circles. Nothing it did in those "
    "rounds was lost. Ask again with a more specific request, point it at the file to "
    "change, or try a stronger model."
)


class ProgressGuard:
    """Counts consecutive rounds with an unchanged workspace."""

    def __init__(self, probe: Callable[[], Hashable] | None, limit: int = STALL_LIMIT) -> None:
        self._probe = probe
        self.limit = limit
        self.unchanged = 0
        self._last: Hashable = None
        self._first: asyncio.Future[Hashable] | None = None

    def start(self) -> None:
        """Start taking the fingerprint the first round is compared with, in a worker
        thread while the first model call runs (a walk of a big workspace would
        otherwise delay every turn's first request)."""
        if self._probe is not None:
            self._first = asyncio.get_running_loop().run_in_executor(None, self._probe)
            self._first.add_done_callback(_retrieved)

    async def before_tools(self) -> None:
        """Wait for the first fingerprint: it must show the workspace as the tools found it."""
        if self._first is not None:
            self._last = await self._first
            self._first = None

    async def observe(self) -> bool:
        """Fingerprint the workspace after a round; True when it changed."""
        if self._probe is None:
            return False
        await self.before_tools()
        current = await asyncio.to_thread(self._probe)
        changed = current != self._last
        self._last = current
        self.unchanged = 0 if changed else self.unchanged + 1
        return changed

    @property
    def stalled(self) -> bool:
        return self._probe is not None and self.limit > 0 and self.unchanged >= self.limit

    def explanation(self) -> str:
        return NO_PROGRESS.format(count=self.unchanged)


def _retrieved(future: asyncio.Future[Hashable]) -> None:
    """A first fingerprint's failure is logged here, once (a turn that runs tools also
    meets it in `before_tools`; one without tools would otherwise lose it)."""
    if not future.cancelled() and (exc := future.exception()) is not None:
        log.warning("the workspace fingerprint failed: %r", exc)
