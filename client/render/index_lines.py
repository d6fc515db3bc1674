"""How the code index reads on a terminal: `/map`'s header and state lines, the
lines of an `index.state` event, and `harness daemon status`'s index rows.

Each function takes an answer or an event's data as the daemon sent it
(docs/protocol.md: `session.map`, `index.state`, `daemon.status`'s `indexes`)
and returns text, with a color name where one fits. Roots and errors come from
the daemon and the repository: every one is made one visible line first; a
missing or mistyped number counts as 0. Standard library only, so the one-shot
printer may use `event_line`.
"""

from __future__ import annotations

import math

from coding_harness.client.render.sanitize import one_line

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

ERROR_WIDTH = 300
LARGEST = 10**15  # a count or a duration past this is shown as this
TURN_ON = (
    "no repo map: agent.repo_map_tokens is 0; set it to a token budget (1024 is the default) "
    'under "agent" in ~/.coding_harness.json or .local_coding_harness.json to turn it on'
)


def map_header(answer: Mapping[str, Any]) -> tuple[str, str]:
    """The line above `/map`'s text, or the whole answer when there is no map to show.

    `repo map: 812 of 1,024 tokens, 9 files indexed`; while the index builds,
    `code index: building, 3,000 of 10,000 files; the map comes once it is ready`.
    """
    state = str(answer.get("state", ""))
    if state == "off":
        return TURN_ON, "yellow"
    if state == "failed":
        return f"code index failed: {_error(answer.get('error'))}", "red"
    if state == "building":
        return f"code index: building{_progress(answer)}; the map comes once it is ready", "dim"
    tokens, budget, files = (_count(answer.get(key)) for key in ("tokens", "budget", "files"))
    header = f"repo map: {tokens:,} of {budget:,} tokens, {_files(files)} indexed"
    if not str(answer.get("map") or "").strip():
        header += "; no definitions to show yet"
    return header, "bold"


def event_line(data: Mapping[str, Any]) -> tuple[str, str]:
    """An `index.state` event's line: `indexing: 3,000/10,000 files`,
    `code index ready: 10,000 files in 4.2 s`, `code index failed: ...`."""
    state = str(data.get("state", ""))
    if state == "failed":
        return f"code index failed: {_error(data.get('error'))}", "red"
    if state == "ready":
        files = _files(_count(data.get("files")))
        return f"code index ready: {files} in {_seconds(data.get('seconds'))}", "dim"
    done, total = _count(data.get("done")), _count(data.get("total"))
    return (f"indexing: {done:,}/{total:,} files" if total else "indexing the workspace"), "dim"


def status_line(entry: Mapping[str, Any]) -> str:
    """One index of `daemon.status`: `/src/app  ready, 9,812 files, 4.2 s`."""
    root, state = one_line(str(entry.get("root", "?"))), str(entry.get("state", "?"))
    files, seconds = _files(_count(entry.get("files"))), _seconds(entry.get("seconds"))
    if state == "building":
        return f"{root}  building{_progress(entry)}, {seconds} so far"
    if state == "failed":
        return f"{root}  failed after {seconds}: {_error(entry.get('error'))}"
    return f"{root}  {one_line(state)}, {files}, {seconds}"


def _progress(data: Mapping[str, Any]) -> str:
    done, total = _count(data.get("done")), _count(data.get("total"))
    return f", {done:,} of {total:,} files" if total else ""


def _files(count: int) -> str:
    return f"{count:,} file{'' if count == 1 else 's'}"


def _seconds(value: object) -> str:
    return f"{_number(value):.1f} s"


def _count(value: object) -> int:
    return int(_number(value))


def _number(value: object) -> float:
    """A finite number >= 0, or 0: a garbled field never breaks a line."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    if isinstance(value, int):  # JSON's integers have no bound; a float's range has
        value = min(value, LARGEST)
    return max(float(value), 0.0) if math.isfinite(value) else 0.0


def _error(error: object) -> str:
    return one_line(str(error), ERROR_WIDTH) if error else "no reason given"
