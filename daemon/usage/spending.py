"""Spending limits: a turn stops before a model call that would take spending past one.

Two optional limits, in USD: one per session (`agent.spend_limit_session_usd`)
and one per local calendar day for every session of the daemon together
(`agent.spend_limit_day_usd`). Before each model call the turn asks
`SpendingGuard.check` with an estimate of that call's cost; the answer is None
to go on, or the message the turn stops with: which limit, what was spent,
what the next call would cost, and how to raise the limit.

Spending is what the usage rows priced (`cost.py`): a profile without pricing
has an unknown cost and counts as nothing (`unpriced_notice` says so), a local
(`mlx`) profile costs nothing. The guard is pure and reads spending through
two callables; `turn_spending` builds them for one turn from the store (the
rows already written) and the turn's own calls (the rows still in memory).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Protocol

from coding_harness.daemon.agent.seams import JSONObject, Usage
from coding_harness.daemon.config.profiles import ProviderProfile
from coding_harness.daemon.store.usage_rows import usage_day
from coding_harness.daemon.usage.cost import cost_usd
from coding_harness.protocol.config_files import GLOBAL_CONFIG_NAME

SESSION_KEY = "agent.spend_limit_session_usd"
DAY_KEY = "agent.spend_limit_day_usd"
CONFIG_HINT = f"~/{GLOBAL_CONFIG_NAME}"
CHARS_PER_TOKEN = 4  # a rough rule for English text and code, used before any usage is known

Spent = Callable[[], float]


class SpendReader(Protocol):
    """What the store answers about money already spent (see `UsageRows`)."""

    def spent_today_usd(
        self, *, day: str | None = None, except_turn: tuple[str, str] | None = None
    ) -> float: ...

    def spent_session_usd(self, session_id: str, *, except_turn: str | None = None) -> float: ...


def usd(amount: float) -> str:
    """Money for people: "$4.87", "$1,234.50", "$0.0042", "$4.996"."""
    text = f"{amount:,.4f}".rstrip("0")
    whole, _, cents = text.partition(".")
    return f"${whole}.{cents.ljust(2, '0')}"


class SpendingGuard:
    """Decides whether the next model call may go ahead under the spending limits."""

    def __init__(
        self,
        session_limit: float | None,
        day_limit: float | None,
        spent_session: Spent,
        spent_today: Spent,
        *,
        day: Callable[[], str] = usage_day,
        config_hint: str = CONFIG_HINT,
    ) -> None:
        for name, limit in (("session_limit", session_limit), ("day_limit", day_limit)):
            if limit is not None and not (math.isfinite(limit) and limit > 0):
                raise ValueError(f"{name} must be a positive number of USD or None, not {limit}")
        self.session_limit = session_limit
        self.day_limit = day_limit
        self._spent_session = spent_session
        self._spent_today = spent_today
        self._day = day
        self._hint = config_hint

    @property
    def active(self) -> bool:
        """True when at least one limit is set."""
        return self.session_limit is not None or self.day_limit is not None

    def check(self, next_estimate_usd: float) -> str | None:
        """None when a call costing about `next_estimate_usd` stays within every limit,
        else why the turn stops (every limit it would pass) and how to go on."""
        estimate = next_estimate_usd if math.isfinite(next_estimate_usd) else 0.0
        estimate = max(0.0, estimate)
        reasons: list[str] = []
        if self.session_limit is not None:
            spent = self._spent_session()
            if _passes(spent, estimate, self.session_limit):
                reasons.append(self._session_reason(spent, estimate, self.session_limit))
        if self.day_limit is not None:
            spent = self._spent_today()
            if _passes(spent, estimate, self.day_limit):
                reasons.append(self._day_reason(spent, estimate, self.day_limit))
        if not reasons:
            return None
        return "Stopped before the next model call: " + " ".join(reasons)

    def _session_reason(self, spent: float, estimate: float, limit: float) -> str:
        return (
            f"this session has spent {_against(spent, estimate, limit)} spending limit."
            f" To go on, raise {SESSION_KEY} in {self._hint} (or remove it) and send your"
            " request again, or start a new session."
        )

    def _day_reason(self, spent: float, estimate: float, limit: float) -> str:
        return (
            f"model calls today ({self._day()}, all sessions) have cost"
            f" {_against(spent, estimate, limit)} daily spending limit."
            f" To go on, raise {DAY_KEY} in {self._hint} (or remove it) and send your"
            " request again, or wait until tomorrow."
        )


def _passes(spent: float, estimate: float, limit: float) -> bool:
    return spent >= limit or spent + estimate > limit


def _against(spent: float, estimate: float, limit: float) -> str:
    """The middle of a reason: what was spent, the estimate, the limit it would pass."""
    if spent >= limit:
        return f"{usd(spent)}, reaching the {usd(limit)}"
    return (
        f"{usd(spent)} and the next model call would cost about {usd(estimate)},"
        f" which would pass the {usd(limit)}"
    )


def estimate_call_usd(
    profile: ProviderProfile, last: Usage | None, messages: Sequence[JSONObject] = ()
) -> float:
    """A rough cost of the next call: the last call's prompt grown by its own answer (or
    the messages' length in tokens, if more), answered at the last call's length."""
    prompt = 0
    if messages:
        prompt = len(json.dumps(list(messages), ensure_ascii=False)) // CHARS_PER_TOKEN
    if last is not None:
        prompt = max(prompt, last.prompt_tokens + last.completion_tokens)
    guess = Usage(
        prompt_tokens=prompt,
        cached_tokens=min(last.cached_tokens, prompt) if last else 0,
        completion_tokens=last.completion_tokens if last else 0,
    )
    return cost_usd(guess, profile) or 0.0


def unpriced_notice(profile: ProviderProfile, guard: SpendingGuard) -> str | None:
    """What to tell the user when limits are set but this profile's calls cannot be priced."""
    if not guard.active or cost_usd(Usage(prompt_tokens=1), profile) is not None:
        return None
    return (
        f"spending limits are set, but the profile {profile.name!r} has no pricing, so its"
        f" model calls are not counted toward them; add providers.{profile.name}.pricing"
        f" in {CONFIG_HINT}"
    )


class TurnSpending:
    """One turn's part: counts the turn's own calls and asks the guard before the next."""

    def __init__(self, profile: ProviderProfile) -> None:
        self.profile = profile
        self.cost_usd = 0.0  # known cost of this turn's calls so far
        self.last: Usage | None = None
        self.guard = SpendingGuard(None, None, lambda: 0.0, lambda: 0.0)

    def observe(self, usage: Usage) -> None:
        """Count one model call of this turn (call it wherever usage is counted)."""
        self.cost_usd += cost_usd(usage, self.profile) or 0.0
        self.last = usage

    def check(self, messages: Sequence[JSONObject] = ()) -> str | None:
        """Before a model call with `messages`: None to go on, else the stop message."""
        if not self.guard.active:
            return None
        return self.guard.check(estimate_call_usd(self.profile, self.last, messages))

    @property
    def notice(self) -> str | None:
        return unpriced_notice(self.profile, self.guard)


def turn_spending(
    *,
    session_limit: float | None,
    day_limit: float | None,
    profile: ProviderProfile,
    store: SpendReader | None,
    session_id: str,
    turn_id: str,
    session_cost: Callable[[], float | None],
) -> TurnSpending:
    """The spending view of one turn: the store's rows of other turns plus this turn's calls
    (some not written yet). Without a store, the session's own running total is used."""
    turn = TurnSpending(profile)
    if store is None:

        def spent_session() -> float:
            return session_cost() or 0.0

        spent_today = spent_session
    else:

        def spent_session() -> float:
            return store.spent_session_usd(session_id, except_turn=turn_id) + turn.cost_usd

        def spent_today() -> float:
            return store.spent_today_usd(except_turn=(session_id, turn_id)) + turn.cost_usd

    turn.guard = SpendingGuard(_limit(session_limit), _limit(day_limit), spent_session, spent_today)
    return turn


def _limit(value: float | None) -> float | None:
    """A configured limit; an infinite one (JSON allows `Infinity`) is no limit."""
    return None if value is None or value == math.inf else value
