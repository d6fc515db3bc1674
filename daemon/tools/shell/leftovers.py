"""What tool commands leave behind when the daemon itself is killed, and the sweep.

While commands run, the daemon keeps `tool-processes.json` in its state folder
(private, replaced whole on each change, removed when nothing is left): the
boot, and for each running command and each process re-parented to the
daemon, its pid, start and command token. A daemon killed with SIGKILL
cannot end what its commands started; the command's direct child dies with it
(parent-death signal), the rest is swept by the next daemon, with the state
folder locked and before anyone is answered. It kills:

- each recorded process that is still the same process (pid and start);
- the members of a recorded process's group or session started after it,
  unless that pid now names another process (the group was reused);
- every process whose environment carries a recorded command token;
- and all descendants of those.

A record from another boot is dropped: its processes are gone.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coding_harness.daemon.tools.shell import process_tree
from coding_harness.daemon.tools.shell.process_tree import ProcInfo

log = logging.getLogger(__name__)

RECORD_NAME = "tool-processes.json"
RECORD_VERSION = 1


@dataclass(kw_only=True, slots=True, frozen=True)
class Entry:
    """A recorded process: a command's direct child, or one re-parented to the daemon."""

    pid: int
    start: float
    token: str | None


class LeftoverRecord:
    """The record file of one state folder."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._written: frozenset[Entry] = frozenset()
        self._failing = False  # warn once, not at every scan

    def write(self, entries: Iterable[Entry]) -> None:
        """Replace the record with `entries` (remove it when there are none)."""
        wanted = frozenset(entries)
        if wanted == self._written:
            return
        try:
            if wanted:
                self._replace(wanted)
            else:
                self.path.unlink(missing_ok=True)
        except OSError as exc:
            if not self._failing:
                log.warning("could not record running tool processes in %s: %s", self.path, exc)
            self._failing = True
            return
        self._failing = False
        self._written = wanted

    def _temporary(self, pid: int | str) -> Path:
        return self.path.with_name(f".{self.path.name}.{pid}.tmp")

    def _replace(self, entries: frozenset[Entry]) -> None:
        data = {
            "version": RECORD_VERSION,
            "boot": process_tree.boot_id(),
            "daemon": os.getpid(),
            "entries": [
                {"pid": e.pid, "start": e.start, "token": e.token}
                for e in sorted(entries, key=lambda e: (e.pid, e.start))
            ],
        }
        temporary = self._temporary(os.getpid())
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out)
        temporary.replace(self.path)

    def sweep(self) -> int:
        """End what a previous daemon's commands left running; how many were killed."""
        entries = self._read()
        with contextlib.suppress(OSError):
            self.path.unlink(missing_ok=True)
            for stale in self.path.parent.glob(self._temporary("*").name):
                stale.unlink(missing_ok=True)  # a daemon killed while it wrote
        self._written = frozenset()
        if not entries:
            return 0
        table = process_tree.snapshot()
        doomed = leftovers(table, entries) - _protected(table)
        killed = process_tree.kill_all(table, doomed)
        if killed:
            log.warning("ended %d process(es) left running by a previous daemon's tools", killed)
        return killed

    def _read(self) -> list[Entry]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            log.warning("ignoring an unreadable %s: %s", self.path, exc)
            return []
        if not isinstance(data, dict) or data.get("boot") != process_tree.boot_id():
            return []
        return [entry for item in data.get("entries") or [] if (entry := _entry(item))]


def _entry(item: Any) -> Entry | None:
    try:
        token = item.get("token")
        return Entry(
            pid=int(item["pid"]),
            start=float(item["start"]),
            token=token if isinstance(token, str) and token else None,
        )
    except (AttributeError, KeyError, TypeError, ValueError):
        return None


def leftovers(table: dict[int, ProcInfo], entries: list[Entry]) -> set[int]:
    """The pids in `table` that `entries` account for, with their descendants."""
    recorded = {entry.pid: entry for entry in entries}
    found: set[int] = set()
    for info in table.values():
        if _is_recorded(info, recorded, table):
            found.add(info.pid)
    tokens = {entry.token for entry in entries if entry.token}
    earliest = min(entry.start for entry in entries)
    for info in table.values():
        if (
            info.pid not in found
            and info.start >= earliest
            and not info.zombie
            and process_tree.command_token(info.pid) in tokens
        ):
            found.add(info.pid)
    return process_tree.subtree(table, found)


def _is_recorded(info: ProcInfo, recorded: dict[int, Entry], table: dict[int, ProcInfo]) -> bool:
    entry = recorded.get(info.pid)
    if entry is not None and entry.start == info.start:
        return True
    for leader in (info.pgid, info.sid):
        entry = recorded.get(leader)
        if entry is None or info.start < entry.start:
            continue
        holder = table.get(leader)
        if holder is None or holder.start == entry.start:
            return True
    return False


def _protected(table: dict[int, ProcInfo]) -> set[int]:
    """This process and its ancestors: never swept, whatever a record says."""
    mine = {os.getpid()}
    info = table.get(os.getpid())
    while info is not None and info.ppid not in mine and info.ppid > 0:
        mine.add(info.ppid)
        info = table.get(info.ppid)
    return mine
