"""SpendingGuard: when a model call may go ahead under the session and daily limits, and
what the user is told when it may not."""

from __future__ import annotations

import math

import pytest

from coding_harness.daemon.usage.spending import DAY_KEY, SESSION_KEY, SpendingGuard, usd

DAY = "2026-11-30"


class Ledger:
    """Spending that tests set by hand; counts how often each total is read."""

    def __init__(self, session: float = 0.0, today: float = 0.0) -> None:
        self.session = session
        self.today = today
        self.reads = {"session": 0, "today": 0}

    def spent_session(self) -> float:
        self.reads["session"] += 1
        return self.session

    def spent_today(self) -> float:
        self.reads["today"] += 1
        return self.today


def guard(ledger: Ledger, session: float | None = None, day: float | None = None) -> SpendingGuard:
    return SpendingGuard(session, day, ledger.spent_session, ledger.spent_today, day=lambda: DAY)


def never() -> float:
    raise AssertionError("a total was read for a limit that is not set")


# --- no limits ------------------------------------------------------------------------
def test_without_limits_every_call_goes_ahead_and_nothing_is_read() -> None:
    unlimited = SpendingGuard(None, None, never, never)
    assert not unlimited.active
    assert unlimited.check(0.0) is None
    assert unlimited.check(1e9) is None


def test_only_the_totals_of_set_limits_are_read() -> None:
    assert SpendingGuard(5.0, None, lambda: 1.0, never).check(0.5) is None
    assert SpendingGuard(None, 5.0, never, lambda: 1.0).check(0.5) is None


# --- the session limit ----------------------------------------------------------------
def test_a_call_within_the_session_limit_goes_ahead() -> None:
    assert guard(Ledger(session=4.0), session=5.0).check(0.5) is None


def test_a_call_that_would_pass_the_session_limit_stops_the_turn() -> None:
    message = guard(Ledger(session=4.87), session=5.0).check(0.21)
    assert message is not None
    assert message.startswith("Stopped before the next model call: this session has spent $4.87")
    assert "would cost about $0.21" in message
    assert "would pass the $5.00 spending limit" in message
    assert f"raise {SESSION_KEY} in ~/.coding_harness.json" in message
    assert "send your request again" in message
    assert "start a new session" in message
    assert DAY_KEY not in message


def test_a_call_that_ends_exactly_on_the_limit_goes_ahead() -> None:
    assert guard(Ledger(session=4.0), session=5.0).check(1.0) is None


def test_a_reached_limit_stops_even_a_free_call() -> None:
    message = guard(Ledger(session=5.0), session=5.0).check(0.0)
    assert message is not None
    assert "this session has spent $5.00, reaching the $5.00 spending limit" in message
    assert "would cost" not in message


def test_a_limit_already_passed_says_how_much_was_spent() -> None:
    message = guard(Ledger(session=5.4321), session=5.0).check(0.01)
    assert message is not None
    assert "$5.4321, reaching the $5.00" in message


# --- the daily limit ------------------------------------------------------------------
def test_a_call_that_would_pass_the_daily_limit_names_the_day_and_the_key() -> None:
    message = guard(Ledger(today=19.9), day=20.0).check(0.25)
    assert message is not None
    assert f"model calls today ({DAY}, all sessions) have cost $19.90" in message
    assert "would cost about $0.25, which would pass the $20.00 daily spending limit" in message
    assert f"raise {DAY_KEY} in ~/.coding_harness.json" in message
    assert "wait until tomorrow" in message
    assert SESSION_KEY not in message


def test_the_daily_limit_counts_every_session_while_the_session_one_holds() -> None:
    ledger = Ledger(session=0.5, today=9.9)
    message = guard(ledger, session=5.0, day=10.0).check(0.2)
    assert message is not None
    assert DAY_KEY in message and SESSION_KEY not in message


def test_both_limits_passed_are_both_named_session_first() -> None:
    message = guard(Ledger(session=5.0, today=20.0), session=5.0, day=20.0).check(1.0)
    assert message is not None
    assert message.count("Stopped") == 1
    assert message.index(SESSION_KEY) < message.index(DAY_KEY)


def test_totals_are_read_afresh_at_every_check() -> None:
    ledger = Ledger(session=1.0, today=1.0)
    limited = guard(ledger, session=2.0, day=3.0)
    assert limited.check(0.5) is None
    ledger.session = 1.8
    assert limited.check(0.5) is not None
    ledger.session, ledger.today = 0.0, 2.9
    assert limited.check(0.5) is not None
    assert ledger.reads == {"session": 3, "today": 3}


# --- odd estimates and limits ---------------------------------------------------------
@pytest.mark.parametrize("estimate", [math.nan, math.inf, -math.inf, -3.0])
def test_an_estimate_that_is_no_number_of_dollars_counts_as_nothing(estimate: float) -> None:
    assert guard(Ledger(session=4.0), session=5.0).check(estimate) is None
    assert guard(Ledger(session=5.0), session=5.0).check(estimate) is not None


@pytest.mark.parametrize("limit", [0.0, -1.0, math.nan, math.inf])
def test_a_limit_must_be_a_positive_number(limit: float) -> None:
    with pytest.raises(ValueError, match="positive number"):
        SpendingGuard(limit, None, never, never)
    with pytest.raises(ValueError, match="day_limit"):
        SpendingGuard(None, limit, never, never)


def test_a_tiny_limit_works_in_fractions_of_a_cent() -> None:
    message = guard(Ledger(session=0.004), session=0.005).check(0.0015)
    assert message is not None
    assert "$0.004 and the next model call would cost about $0.0015" in message
    assert "$0.005 spending limit" in message


@pytest.mark.parametrize(
    ("amount", "text"),
    [
        (0.0, "$0.00"),
        (5.0, "$5.00"),
        (4.87, "$4.87"),
        (4.996, "$4.996"),
        (0.0042, "$0.0042"),
        (1234.5, "$1,234.50"),
        (0.00001, "$0.00"),
    ],
)
def test_money_is_shown_to_the_cent_or_finer_when_it_matters(amount: float, text: str) -> None:
    assert usd(amount) == text
