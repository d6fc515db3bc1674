"""The terminal bell for an approval left waiting: whether, when, and where it rings.

Each client times the wait itself, so the daemon tells clients nothing new: a
`Reminder` starts a timer for each `approval.requested` and stops it on
`approval.resolved` or `turn.finished`. When `notify.after_seconds` pass
first, it writes BEL once to the terminal (standard error, else standard
output, and only when that is a terminal; NO_COLOR does not matter for BEL)
and calls back, so the client says which session waits.

`bell_settings` reads `notify.bell` and `notify.after_seconds` from the
config files in the daemon's order (the global file, the project's file once
`harness trust` has recorded it, the legacy file; the last one that sets a
key wins). `CODING_HARNESS_BELL=off` (or 0, false, no) silences this
client's bell whatever the files say; the line is shown either way.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from coding_harness.protocol import paths, trust
from coding_harness.protocol.config_files import (
    global_config,
    legacy_config,
    parse_json,
    project_config,
)

BEL = "\a"
BELL_VARIABLE = "CODING_HARNESS_BELL"
DEFAULT_AFTER_SECONDS = 10.0
_OFF = ("off", "0", "false", "no")
_READ_LIMIT = 1024 * 1024


@dataclass(frozen=True, kw_only=True, slots=True)
class BellSettings:
    ring: bool = True
    after_seconds: float = DEFAULT_AFTER_SECONDS


def bell_settings(
    cwd: Path | None = None,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> BellSettings:
    """The bell as the config files of `cwd` (default: this folder) and the variable say."""
    env = os.environ if env is None else env
    home = home or paths.home_dir()
    project = project_config(cwd or Path.cwd())
    ring, after = True, DEFAULT_AFTER_SECONDS
    for path in (global_config(home), project, legacy_config(home)):
        notify = _notify_section(path, trusted_only=path == project)
        if isinstance(notify.get("bell"), bool):
            ring = notify["bell"]
        seconds = notify.get("after_seconds")
        if isinstance(seconds, int | float) and not isinstance(seconds, bool) and seconds >= 0:
            after = float(seconds)
    if env.get(BELL_VARIABLE, "").strip().lower() in _OFF:
        ring = False
    return BellSettings(ring=ring, after_seconds=after)


def _notify_section(path: Path, *, trusted_only: bool) -> dict[str, Any]:
    try:
        with path.open("rb") as file:
            raw = file.read(_READ_LIMIT + 1)
    except OSError:
        return {}
    if len(raw) > _READ_LIMIT or (
        trusted_only and not trust.is_trusted(trust.store_path(), path, raw)
    ):
        return {}
    try:
        data = parse_json(raw.decode("utf-8"))
    except ValueError:
        return {}
    notify = data.get("notify") if isinstance(data, dict) else None
    return notify if isinstance(notify, dict) else {}


def terminal_stream() -> TextIO | None:
    """Standard error, else standard output, when it is a terminal."""
    for stream in (sys.stderr, sys.stdout):
        try:
            if stream is not None and stream.isatty():
                return stream
        except (AttributeError, ValueError):  # closed, or not a real stream
            continue
    return None


def ring(settings: BellSettings) -> bool:
    """Write BEL to the terminal when the bell is on and there is one; whether it rang."""
    stream = terminal_stream() if settings.ring else None
    if stream is None:
        return False
    try:
        stream.write(BEL)
        stream.flush()
    except (OSError, ValueError):
        return False
    return True


class Reminder:
    """One timer per waiting approval request; `due(request data)` when one fires."""

    def __init__(self, settings: BellSettings, due: Callable[[dict[str, Any]], None]) -> None:
        self.settings = settings
        self._due = due
        self._lock = threading.Lock()
        self._timers: dict[str, threading.Timer] = {}

    def requested(self, data: dict[str, Any]) -> None:
        request = str(data.get("request"))
        with self._lock:
            if request in self._timers:
                return
            timer = threading.Timer(self.settings.after_seconds, self._fire, (request, data))
            timer.daemon = True
            self._timers[request] = timer
        timer.start()

    def resolved(self, request: object) -> None:
        with self._lock:
            timer = self._timers.pop(str(request), None)
        if timer is not None:
            timer.cancel()

    def clear(self) -> None:
        with self._lock:
            timers, self._timers = list(self._timers.values()), {}
        for timer in timers:
            timer.cancel()

    def _fire(self, request: str, data: dict[str, Any]) -> None:
        with self._lock:
            if self._timers.pop(request, None) is None:
                return  # answered just now
        ring(self.settings)
        self._due(data)


@contextmanager
def reminding(settings: BellSettings, due: Callable[[], None]) -> Iterator[None]:
    """A reminder for the one request asked about inside the block."""
    reminder = Reminder(settings, lambda _data: due())
    reminder.requested({"request": "asked"})
    try:
        yield
    finally:
        reminder.clear()
