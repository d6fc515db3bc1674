"""The token budget: a turn, or a session, that has used too many tokens stops.

Tokens are counted as the provider reports them, prompt plus completion, for
every model call (so a long history costs its length again on each call, as
it does on the bill). The turn's own count is kept here; the session's
count and its optional budget come from a callable the turn runner passes
in. The check runs after each model call, before any tool it asked for.
"""

from __future__ import annotations

from collections.abc import Callable

from coding_harness.daemon.agent.seams import Usage

SessionTokens = Callable[[], tuple[int, int | None]]
"""`() -> (tokens used by the session so far, the session's budget or None)`."""

TURN_OVER = (
    "Stopped: this turn has used {used:,} tokens, more than its budget of {limit:,}. "
    "The tool calls of the last reply were not run. Raise the budget, or continue with "
    "a narrower request."
)
SESSION_OVER = (
    "Stopped: this session has used {used:,} tokens, more than its budget of {limit:,}. "
    "The tool calls of the last reply were not run. Raise the budget, or start a new "
    "session."
)


class TokenBudget:
    def __init__(self, turn_limit: int | None, session: SessionTokens | None) -> None:
        self.turn_limit = turn_limit
        self._session = session
        self.used = 0

    def add(self, usage: Usage) -> None:
        self.used += usage.prompt_tokens + usage.completion_tokens

    def exceeded(self) -> str | None:
        """Why the turn must stop, or None while both budgets hold."""
        if self.turn_limit is not None and self.used > self.turn_limit:
            return TURN_OVER.format(used=self.used, limit=self.turn_limit)
        if self._session is not None:
            used, limit = self._session()
            if limit is not None and used > limit:
                return SESSION_OVER.format(used=used, limit=limit)
        return None
