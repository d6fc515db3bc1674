"""Guards against a model that wastes a run.

`RepetitionGuard`: the same batch of tool calls twice in a row, or three times
within the last five batches, means the model is stuck. One repeat after
other calls is allowed, since re-reading a file after a stale-base refusal is
real progress.
"""

from __future__ import annotations

import json
from collections import deque

from coding_harness.daemon.agent.seams import ToolCall

WINDOW = 5
IN_WINDOW_LIMIT = 3


def batch_signature(calls: list[ToolCall]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((call.name, _normalized(call.arguments)) for call in calls))


def _normalized(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), sort_keys=True, separators=(",", ":"))
    except ValueError:
        return arguments.strip()


class RepetitionGuard:
    def __init__(self) -> None:
        self._recent: deque[tuple[tuple[str, str], ...]] = deque(maxlen=WINDOW)

    def stuck(self, calls: list[ToolCall]) -> bool:
        """Record this batch; True when it repeats too often."""
        signature = batch_signature(calls)
        twice_in_a_row = bool(self._recent) and self._recent[-1] == signature
        self._recent.append(signature)
        return twice_in_a_row or list(self._recent).count(signature) >= IN_WINDOW_LIMIT
