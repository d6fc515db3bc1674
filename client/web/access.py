"""Who may use the bridge: the token it printed, the cookies it traded for it, and
the limit on wrong guesses.

The token is fresh at each start (unless the user kept one on purpose with
`--keep-token`) and stays good while this `harness web` runs, so a laptop and a
phone can both open the URL. A visit with the right token gets a cookie of its
own (random, HttpOnly, SameSite=Strict), which the bridge remembers until it
stops; the token itself is never stored in the browser. Wrong tokens and wrong
cookies count against the address they came from and against the bridge as a
whole (a tunnel makes every visitor 127.0.0.1): past the limit, every guess is
refused for a while without being compared.
"""

from __future__ import annotations

import hmac
import os
import secrets
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

COOKIE = "harness_web"
TOKEN_BYTES = 32
COOKIES_KEPT = 256
PER_ADDRESS = 5  # wrong guesses from one address per window
OVERALL = 20  # wrong guesses from everyone per window
WINDOW = 60.0  # seconds


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def kept_token(path: Path) -> str:
    """The token saved in `path` (made and saved, 0600, the first time)."""
    try:
        token = path.read_text().strip()
        if len(token) >= 32:
            return token
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    token = new_token()
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as out:
        out.write(token + "\n")
    return token


class Guesses:
    """Recent wrong guesses, by address and overall."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._now = clock
        self._by_address: dict[str, deque[float]] = {}
        self._all: deque[float] = deque()

    def blocked(self, address: str) -> float:
        """Seconds until `address` may guess again (0: it may now)."""
        now = self._now()
        waits = [0.0]
        for times, limit in ((self._by_address.get(address), PER_ADDRESS), (self._all, OVERALL)):
            if times is None:
                continue
            while times and times[0] <= now - WINDOW:
                times.popleft()
            if len(times) >= limit:
                waits.append(times[0] + WINDOW - now)
        return max(waits)

    def wrong(self, address: str) -> None:
        now = self._now()
        if len(self._by_address) > 4096:  # a flood of addresses: start over, the overall cap holds
            self._by_address.clear()
        self._by_address.setdefault(address, deque()).append(now)
        self._all.append(now)


class Access:
    def __init__(self, token: str) -> None:
        self.token = token
        self._cookies: deque[str] = deque(maxlen=COOKIES_KEPT)
        self.guesses = Guesses()

    def token_ok(self, offered: str) -> bool:
        return hmac.compare_digest(offered.encode(), self.token.encode())

    def new_cookie(self) -> str:
        value = secrets.token_urlsafe(TOKEN_BYTES)
        self._cookies.append(value)
        return value

    def cookie_ok(self, offered: str | None) -> bool:
        if not offered:
            return False
        # every kept cookie is compared, so the time taken says nothing of which matched
        found = False
        for value in self._cookies:
            found |= hmac.compare_digest(offered.encode(), value.encode())
        return found
