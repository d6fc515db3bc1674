"""Tokens, cookies and the limit on wrong guesses (client/web/access.py)."""

from __future__ import annotations

import stat
from pathlib import Path

from coding_harness.client.web.access import (
    OVERALL,
    PER_ADDRESS,
    WINDOW,
    Access,
    Guesses,
    kept_token,
)


def test_the_token_earns_cookies_that_only_this_bridge_knows() -> None:
    access = Access("t" * 43)
    assert access.token_ok("t" * 43) and not access.token_ok("t" * 42 + "u")
    first, second = access.new_cookie(), access.new_cookie()
    assert first != second and access.cookie_ok(first) and access.cookie_ok(second)
    assert not access.cookie_ok("made-up") and not access.cookie_ok(None)
    assert not Access("x" * 43).cookie_ok(first)


def test_wrong_guesses_lock_an_address_out_for_the_window_then_let_it_in() -> None:
    now = [1000.0]
    guesses = Guesses(clock=lambda: now[0])
    for _ in range(PER_ADDRESS):
        assert guesses.blocked("a") == 0
        guesses.wrong("a")
    assert guesses.blocked("a") == WINDOW
    assert guesses.blocked("b") == 0  # another address is not locked out by a's guesses
    now[0] += WINDOW
    assert guesses.blocked("a") == 0


def test_guesses_from_many_addresses_lock_everyone_out() -> None:
    guesses = Guesses(clock=lambda: 5.0)
    for n in range(OVERALL):
        guesses.wrong(f"10.0.0.{n}")
    assert guesses.blocked("10.9.9.9") > 0


def test_a_kept_token_is_saved_private_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "state" / "web-token"
    token = kept_token(path)
    assert kept_token(path) == token and len(token) >= 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
