"""Telling the user when the running daemon is older than this client.

The daemon outlives upgrades: after the package is updated, `harness` can be
newer than the daemon it reaches. `notice` compares this client's version
with the one the daemon reported in `initialize` (result.daemon.version) and,
when the client is newer, returns one line that offers `harness daemon
restart`. Standard library only: this runs on every one-shot command.
"""

from __future__ import annotations

from coding_harness.client.render.style import Style
from coding_harness.protocol.version import __version__

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def version_numbers(version: str) -> tuple[int, ...]:
    """The leading numeric release parts: "1.2.3rc1" -> (1, 2, 3); "" -> ()."""
    numbers: list[int] = []
    for piece in version.strip().split("."):
        digits = ""
        for char in piece:
            if not char.isdigit():
                break
            digits += char
        if not digits:
            break
        numbers.append(int(digits))
        if len(digits) < len(piece):
            break
    return tuple(numbers)


def is_newer(client: str, daemon: str) -> bool:
    """True when `client` is a later release than `daemon` (unparsable: False)."""
    mine, theirs = version_numbers(client), version_numbers(daemon)
    if not mine or not theirs:
        return False
    width = max(len(mine), len(theirs))
    return mine + (0,) * (width - len(mine)) > theirs + (0,) * (width - len(theirs))


def daemon_version(info: dict[str, Any]) -> str:
    daemon = info.get("daemon")
    return str(daemon.get("version", "")) if isinstance(daemon, dict) else ""


def notice(info: dict[str, Any], client_version: str = __version__) -> str | None:
    """One line when this client is newer than the daemon in `info`, else None."""
    running = daemon_version(info)
    if not is_newer(client_version, running):
        return None
    return (
        f"harness {client_version} is newer than the running daemon ({running}); "
        "run `harness daemon restart` to switch to the new version"
    )


def warn(info: dict[str, Any], style: Style) -> None:
    """Print the notice, if any, as one line on the style's stream."""
    line = notice(info)
    if line is not None:
        style.line(line, "yellow")
