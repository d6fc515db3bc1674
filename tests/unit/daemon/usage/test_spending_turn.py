"""One turn's spending: the estimate of the next call, the turn's own calls, what is read
from the store, and the notice for profiles that cannot be priced."""

from __future__ import annotations

import json

import pytest

from coding_harness.daemon.agent.seams import Usage
from coding_harness.daemon.config.profiles import ProviderProfile
from coding_harness.daemon.usage.cost import cost_usd
from coding_harness.daemon.usage.spending import (
    SESSION_KEY,
    SpendingGuard,
    TurnSpending,
    estimate_call_usd,
    turn_spending,
    unpriced_notice,
)

# $10 per million input tokens, $5 cached, $30 output: 1,000 prompt tokens cost $0.01.
PRICED = ProviderProfile(
    name="cloud",
    type="openai",
    endpoint="https://api.example.com/v1/chat/completions",
    model="m",
    pricing={"input": 10.0, "cached_input": 5.0, "output": 30.0},
)
UNPRICED = ProviderProfile(
    name="bare", type="openai", endpoint="https://api.example.com/v1", model="m"
)
LOCAL = ProviderProfile(name="local", type="mlx", endpoint="http://localhost:11434/v1", model="m")
CALL = Usage(prompt_tokens=10_000, cached_tokens=4_000, completion_tokens=1_000)


class MemoryStore:
    """A `SpendReader` over rows kept in a list: (session, turn, day, cost or None)."""

    def __init__(self, rows: list[tuple[str, str, str, float | None]], today: str) -> None:
        self.rows = rows
        self.today = today

    def spent_today_usd(
        self, *, day: str | None = None, except_turn: tuple[str, str] | None = None
    ) -> float:
        wanted = day or self.today
        return sum(
            cost or 0.0
            for sid, turn, row_day, cost in self.rows
            if row_day == wanted and (sid, turn) != except_turn
        )

    def spent_session_usd(self, session_id: str, *, except_turn: str | None = None) -> float:
        return sum(
            cost or 0.0
            for sid, turn, _, cost in self.rows
            if sid == session_id and turn != except_turn
        )


# --- the estimate ---------------------------------------------------------------------
def test_nothing_known_estimates_nothing() -> None:
    assert estimate_call_usd(PRICED, None) == 0.0


def test_the_messages_alone_are_priced_as_input_at_four_characters_a_token() -> None:
    messages = [{"role": "user", "content": "x" * 3_970}]
    chars = len(json.dumps(messages))
    assert estimate_call_usd(PRICED, None, messages) == pytest.approx(chars // 4 * 10 / 1e6)


def test_after_a_call_the_next_one_is_its_prompt_and_answer_answered_alike() -> None:
    expected = cost_usd(
        Usage(prompt_tokens=11_000, cached_tokens=4_000, completion_tokens=1_000), PRICED
    )
    assert estimate_call_usd(PRICED, CALL) == pytest.approx(expected)
    assert estimate_call_usd(PRICED, CALL, [{"role": "user", "content": "hi"}]) == expected


def test_messages_longer_than_the_last_prompt_win() -> None:
    messages = [{"role": "tool", "content": "y" * 100_000}]
    assert estimate_call_usd(PRICED, CALL, messages) > estimate_call_usd(PRICED, CALL)


@pytest.mark.parametrize("profile", [UNPRICED, LOCAL])
def test_calls_that_cannot_be_or_need_not_be_priced_estimate_nothing(
    profile: ProviderProfile,
) -> None:
    assert estimate_call_usd(profile, CALL, [{"role": "user", "content": "z" * 999}]) == 0.0


# --- the unpriced notice --------------------------------------------------------------
def test_limits_with_an_unpriced_profile_say_its_calls_do_not_count() -> None:
    limited = SpendingGuard(5.0, None, lambda: 0.0, lambda: 0.0)
    notice = unpriced_notice(UNPRICED, limited)
    assert notice is not None
    assert "'bare' has no pricing" in notice and "providers.bare.pricing" in notice


def test_no_notice_without_limits_or_for_priced_and_local_profiles() -> None:
    limited = SpendingGuard(None, 5.0, lambda: 0.0, lambda: 0.0)
    unlimited = SpendingGuard(None, None, lambda: 0.0, lambda: 0.0)
    assert unpriced_notice(UNPRICED, unlimited) is None
    assert unpriced_notice(PRICED, limited) is None
    assert unpriced_notice(LOCAL, limited) is None


# --- a turn ---------------------------------------------------------------------------
def test_a_turn_counts_the_known_cost_of_its_calls() -> None:
    turn = TurnSpending(PRICED)
    turn.observe(CALL)
    turn.observe(CALL)
    assert turn.cost_usd == pytest.approx(2 * (cost_usd(CALL, PRICED) or 0))
    assert turn.last is CALL
    unpriced = TurnSpending(UNPRICED)
    unpriced.observe(CALL)
    assert unpriced.cost_usd == 0.0


def test_a_turn_without_limits_never_stops() -> None:
    turn = TurnSpending(PRICED)
    turn.observe(Usage(prompt_tokens=10**9))
    assert turn.check([{"role": "user", "content": "hi"}]) is None


def turn_in(store: MemoryStore | None, **limits: float | None) -> TurnSpending:
    return turn_spending(
        session_limit=limits.get("session"),
        day_limit=limits.get("day"),
        profile=PRICED,
        store=store,
        session_id="s1",
        turn_id="t2",
        session_cost=lambda: 0.25,
    )


def test_the_store_gives_other_turns_and_the_turn_gives_its_own_calls() -> None:
    store = MemoryStore(
        [
            ("s1", "t1", "D", 0.5),  # an earlier turn of this session
            ("s1", "t2", "D", 0.02),  # this turn, already written: counted by the turn
            ("s2", "t9", "D", 1.0),  # another session, today
            ("s2", "t8", "Y", 7.0),  # another session, yesterday
            ("s1", "t0", "Y", None),  # unknown cost
        ],
        today="D",
    )
    turn = turn_in(store, session=1.0, day=1.8)
    turn.observe(CALL)  # $0.11; the turn's first call (the row above) is not repeated
    assert turn.guard.check(0.0) is None
    session = turn.guard.check(0.4)  # 0.5 + 0.11 + 0.4 > 1.0
    assert session is not None and SESSION_KEY in session and "$0.61" in session
    day = turn.guard.check(0.3)  # 0.5 + 1.0 + 0.11 + 0.3 > 1.8, session 0.91 holds
    assert day is not None and SESSION_KEY not in day and "$1.61" in day


def test_without_a_store_the_session_total_is_both_figures() -> None:
    turn = turn_in(None, session=0.3, day=0.3)
    assert turn.guard.check(0.04) is None
    message = turn.guard.check(0.06)
    assert message is not None and "$0.25" in message


def test_a_turn_stops_before_the_call_that_would_pass_the_limit() -> None:
    """The loop's view: check, call, count, and again, until the guard says stop."""
    store = MemoryStore([("s1", "t1", "D", 0.3)], today="D")
    turn = turn_in(store, session=0.6)
    calls = 0
    messages = [{"role": "user", "content": "fix it"}]
    while (stop := turn.check(messages)) is None:
        calls += 1
        turn.observe(CALL)  # $0.11 each, the next estimated at about $0.12
        assert calls < 10
    assert calls == 2  # 0.3 + 0.22 = 0.52; a third call of ~0.12 would pass 0.6
    assert "this session has spent $0.52" in stop
    assert "$0.60 spending limit" in stop


def test_an_infinite_limit_is_no_limit() -> None:
    turn = turn_spending(
        session_limit=float("inf"),
        day_limit=None,
        profile=PRICED,
        store=None,
        session_id="s1",
        turn_id="t1",
        session_cost=lambda: 1e12,
    )
    assert not turn.guard.active
    assert turn.check() is None
