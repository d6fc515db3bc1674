"""What the workspace's files were before a command ran, to checkpoint what it changed.

A command the agent runs (`run_shell`, or the `make check` after an applied
edit) can change files no edit tool wrote: a formatter, a code generator, a
Makefile recipe. Before such a tool call `WorkspaceSnapshot.refresh` notes every
visible file's size, time and mode, and keeps the bytes of the small ones
(re-reading only what changed since the last look); after it, another look and
`changes` compare
and gives each changed path with what it was before: its bytes, `None` when it
did not exist, or `TOO_LARGE` when it was not kept (over `FILE_LIMIT`, or past
`TOTAL_LIMIT` or `MAX_FILES` for the whole workspace): such a file is named as
not restorable. Hidden files and folders (`.git` among them) and what the root
`.gitignore` ignores are not looked at, as for the agent's own tools.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from coding_harness.daemon.agent.gitignore import GitIgnore
from coding_harness.daemon.tools.workspace import is_hidden_name

FILE_LIMIT = 1_000_000  # bytes of one file kept
TOTAL_LIMIT = 64_000_000  # bytes kept for the whole workspace
MAX_FILES = 20_000  # files looked at; past it the rest are not kept


class _TooLarge:
    def __repr__(self) -> str:
        return "TOO_LARGE"


TOO_LARGE = _TooLarge()
Before = bytes | None | _TooLarge


@dataclass(frozen=True, slots=True)
class Seen:
    size: int
    mtime_ns: int
    mode: int
    data: bytes | None  # None: not kept (too large, or past the budget)


@dataclass(frozen=True, slots=True)
class Change:
    path: str
    before: Before
    mode: int | None  # the permission bits it had, when it existed


class WorkspaceSnapshot:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._seen: dict[str, Seen] = {}

    def current(self) -> dict[str, Seen]:
        """What the last look saw."""
        return self._seen

    def refresh(self) -> None:
        """Look at the workspace now (reading again only the files that changed)."""
        earlier = self._seen
        now: dict[str, Seen] = {}
        kept = 0
        for rel, info in self._walk():
            old = earlier.get(rel)
            if old is not None and (old.size, old.mtime_ns) == (info.st_size, info.st_mtime_ns):
                seen = old
            else:
                seen = Seen(info.st_size, info.st_mtime_ns, stat.S_IMODE(info.st_mode), None)
                if info.st_size <= FILE_LIMIT and kept + info.st_size <= TOTAL_LIMIT:
                    seen = Seen(seen.size, seen.mtime_ns, seen.mode, _read(self.root / rel))
            kept += len(seen.data) if seen.data is not None else 0
            now[rel] = seen
        self._seen = now

    def changes(self, before: dict[str, Seen]) -> list[Change]:
        """The paths that differ between `before` (an earlier `current()`) and now."""
        after = self._seen
        found: list[Change] = []
        for rel in sorted(before.keys() | after.keys()):
            old, new = before.get(rel), after.get(rel)
            if old is not None and new is not None and _same(old, new):
                continue
            if old is None:
                found.append(Change(path=rel, before=None, mode=None))
            else:
                kept: Before = old.data if old.data is not None else TOO_LARGE
                found.append(Change(path=rel, before=kept, mode=old.mode))
        return found

    def _walk(self) -> list[tuple[str, os.stat_result]]:
        ignore = GitIgnore.for_root(self.root)
        found: list[tuple[str, os.stat_result]] = []
        pending = [""]
        while pending and len(found) < MAX_FILES:
            prefix = pending.pop()
            try:
                entries = list(os.scandir(self.root / prefix if prefix else self.root))
            except OSError:
                continue
            for entry in entries:
                if is_hidden_name(entry.name):
                    continue
                rel = f"{prefix}{entry.name}"
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                    if ignore.has_rules and ignore.ignored(rel, entry.name, is_dir):
                        continue
                    if is_dir:
                        pending.append(rel + "/")
                    elif entry.is_file(follow_symlinks=False):
                        found.append((rel, entry.stat(follow_symlinks=False)))
                except OSError:
                    continue
        return found


def _same(old: Seen, new: Seen) -> bool:
    if (old.size, old.mtime_ns, old.mode) != (new.size, new.mtime_ns, new.mode):
        return False
    return old.data == new.data


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None
