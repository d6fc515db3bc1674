"""The `notify` section of the configuration: how a waiting approval reaches the user.

`after_seconds` is how long an approval waits unanswered before anybody is
told; then each terminal client rings its bell (`bell`, which the clients read
themselves), the daemon sends a desktop notification (`desktop`: "auto" when a
notifier and a display seem present, "on", "off") and runs `command` with the
request as JSON on standard input. A bad value is reported naming its file and
key, and its default kept. The whole section is a key a project file may set
only once trusted (`protocol.trust.SAFE_KEYS` does not list it): `command`
runs a program on the user's machine.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from coding_harness.daemon.config.profiles import OriginOf, bad

DESKTOP_CHOICES = ("auto", "on", "off")
DEFAULT_AFTER_SECONDS = 10.0


@dataclass(frozen=True, kw_only=True, slots=True)
class NotifySettings:
    bell: bool = True
    desktop: str = "auto"
    # A shell command line; None runs nothing.
    command: str | None = None
    after_seconds: float = DEFAULT_AFTER_SECONDS


_RULES = {
    "bell": "must be true or false",
    "desktop": f"must be one of {', '.join(DESKTOP_CHOICES)}",
    "command": "must be a command line (a non-empty string) or null",
    "after_seconds": "must be a number of seconds, 0 or more",
}
_INVALID = object()


def parse_notify(raw: Any, origin_of: OriginOf, problems: list[str]) -> NotifySettings:
    if raw is None:
        return NotifySettings()
    if not isinstance(raw, Mapping):
        problems.append(f"{bad(origin_of, ('notify',), 'must be an object')}; defaults were kept")
        return NotifySettings()
    values: dict[str, Any] = {}
    for key, value in raw.items():
        parsed = _value(key, value)
        if parsed is _INVALID:
            rule = _RULES.get(key, "is not a setting")
            problems.append(f"{bad(origin_of, ('notify', key), rule)}; the default was kept")
        else:
            values[key] = parsed
    return NotifySettings(**values)


def _value(key: str, value: Any) -> Any:
    if key == "bell":
        return value if isinstance(value, bool) else _INVALID
    if key == "desktop":
        return value if value in DESKTOP_CHOICES else _INVALID
    if key == "command":
        if value is None:
            return None
        return value if isinstance(value, str) and value.strip() else _INVALID
    if key == "after_seconds":
        number = isinstance(value, int | float) and not isinstance(value, bool)
        return float(value) if number and value >= 0 else _INVALID
    return _INVALID
