"""What the workspace's files were before a command ran, to checkpoint what it changed.

A command the agent runs (`run_shell`, or the `make check` after an applied
edit) can change files no edit tool wrote: a formatter, a code generator, a
Makefile recipe. Before such a tool call `WorkspaceSnapshot.refresh` notes every
visible file's size, modification and change times, inode and mode, and keeps the
bytes of the small ones (re-reading only what changed since the last look); after
it, another look and `changes` compare and give each changed path with what it
was before: its bytes, `None` when it
did not exist, or `TOO_LARGE` when it was not kept (over `FILE_LIMIT`, or past
`TOTAL_LIMIT` or `MAX_FILES` for the whole workspace): such a file is named as
not restorable. Hidden files and folders (`.git` among them), what the
project ignores (its `.gitignore` files at every level and `.git/info/exclude`,
matched as git does: `index/ignore_rules.py`) and Python's bytecode caches
(`__pycache__`, `*.pyc`), which every check run rewrites, are not looked at: a
build output is not a change of the turn's to list or put back.

A recipe can set a file's mtime back (`touch -r`) and keep its size, but not its
ctime, which the kernel sets at every change, nor its inode when it replaces the
file by a rename: both are compared too. Folders are walked through open folder
descriptors without following symlinks, and files are read by `workspace_read`
(no symlink, at most `FILE_LIMIT` bytes), so a folder or file swapped for a
symlink never leads the look out of the workspace.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from coding_harness.daemon.index.ignore_rules import (
    GIT_IGNORE,
    Layers,
    ignored,
    outer_layers,
    with_folder,
)
from coding_harness.daemon.store.workspace_read import read_regular
from coding_harness.daemon.tools.workspace import is_hidden_name

FILE_LIMIT = 1_000_000  # bytes of one file kept
TOTAL_LIMIT = 64_000_000  # bytes kept for the whole workspace
MAX_FILES = 20_000  # files looked at; past it the rest are not kept
MAX_DEPTH = 64  # folders deeper than this are not looked into
CACHE_FOLDERS = frozenset({"__pycache__"})
CACHE_SUFFIXES = (".pyc", ".pyo")
_IGNORES = (GIT_IGNORE,)


class _TooLarge:
    def __repr__(self) -> str:
        return "TOO_LARGE"


TOO_LARGE = _TooLarge()
Before = bytes | None | _TooLarge


@dataclass(frozen=True, slots=True)
class Seen:
    size: int
    mtime_ns: int
    ctime_ns: int  # set by the kernel at every change: a recipe cannot set it back
    inode: int
    mode: int
    data: bytes | None  # None: not kept (too large, or past the budget)

    def same_stat(self, other: Seen) -> bool:
        return _stat_key(self) == _stat_key(other)


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
            seen = _seen(info, None)
            if old is not None and old.same_stat(seen):
                seen = old
            elif info.st_size <= FILE_LIMIT and kept + info.st_size <= TOTAL_LIMIT:
                seen = _seen(info, self._read(rel))
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

    def _read(self, rel: str) -> bytes | None:
        try:
            found = read_regular(self.root, rel, FILE_LIMIT)
        except OSError:
            return None
        return found[0] if found is not None else None

    def _walk(self) -> list[tuple[str, os.stat_result]]:
        """Every visible regular file and its stat, through folder descriptors opened
        without following symlinks (a folder swapped for one is not entered)."""
        found: list[tuple[str, os.stat_result]] = []
        try:
            fd = os.open(self.root, _FOLDER_FLAGS)
        except OSError:
            return found
        base = os.fspath(self.root)
        try:
            layers = with_folder(outer_layers(base, _IGNORES), base, "", _IGNORES)
            self._scan(fd, "", layers, found, 0)
        finally:
            os.close(fd)
        return found

    def _scan(
        self,
        fd: int,
        prefix: str,
        layers: Layers,
        found: list[tuple[str, os.stat_result]],
        depth: int,
    ) -> None:
        try:
            entries = list(os.scandir(fd))
        except OSError:
            return
        for entry in entries:
            if len(found) >= MAX_FILES:
                return
            if is_hidden_name(entry.name):
                continue
            rel = f"{prefix}{entry.name}"
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                if _cache(entry.name, is_dir) or ignored(layers, rel + "/" if is_dir else rel):
                    continue
                if is_dir and depth < MAX_DEPTH:
                    inner = with_folder(layers, os.fspath(self.root), rel + "/", _IGNORES)
                    sub = os.open(entry.name, _FOLDER_FLAGS, dir_fd=fd)
                    try:
                        self._scan(sub, rel + "/", inner, found, depth + 1)
                    finally:
                        os.close(sub)
                elif entry.is_file(follow_symlinks=False):
                    found.append((rel, entry.stat(follow_symlinks=False)))
            except OSError:
                continue


def _cache(name: str, is_dir: bool) -> bool:
    """Python's bytecode cache, whatever the project's ignore files say."""
    return name in CACHE_FOLDERS if is_dir else name.endswith(CACHE_SUFFIXES)


_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _seen(info: os.stat_result, data: bytes | None) -> Seen:
    return Seen(
        size=info.st_size,
        mtime_ns=info.st_mtime_ns,
        ctime_ns=info.st_ctime_ns,
        inode=info.st_ino,
        mode=stat.S_IMODE(info.st_mode),
        data=data,
    )


def _stat_key(seen: Seen) -> tuple[int, int, int, int, int]:
    return (seen.size, seen.mtime_ns, seen.ctime_ns, seen.inode, seen.mode)


def _same(old: Seen, new: Seen) -> bool:
    """Unchanged: the same stat, or both read and the same bytes and mode (a `touch`)."""
    if old.same_stat(new):
        return True
    if old.data is None or new.data is None:
        return False
    return old.data == new.data and old.mode == new.mode
