"""A cheap fingerprint of the workspace: did anything change since last time?

It is built from `stat` alone (relative path, size and mtime_ns of every
file, and the name of every folder), never from file contents: one `lstat`
per file, made relative to the open folder. Hidden names (dotfiles, `~`
backups, `#...#`) and what the root `.gitignore` ignores are skipped,
symlinks are not followed, and the walk stops before the folder that would
take it past `MAX_ENTRIES` entries. Entries are summed, an order-independent
combination, so the order in which the system lists a folder does not
matter; the sum uses Python's string hashes, so it is only ever compared
within one process.

A `Fingerprinter` is used again and again on one workspace. It keeps each
folder's filtered listing and reuses it while the folder's inode and mtime
are unchanged (adding, removing or renaming an entry changes the folder's
mtime), so a repeat walk is mostly the `lstat` calls. A listing taken less
than `SETTLE_NS` after the folder's last change is not kept: within one
clock tick a second change could leave the mtime as it was.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from coding_harness.daemon.agent.gitignore import GitIgnore

MAX_ENTRIES = 100_000
SETTLE_NS = 2_000_000_000
_MASK = (1 << 64) - 1
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(kw_only=True, slots=True, frozen=True)
class Fingerprint:
    digest: int
    entries: int
    capped: bool  # the walk stopped at MAX_ENTRIES; later changes may go unseen


@dataclass(kw_only=True, slots=True)
class _Listing:
    """One folder's visible, not ignored entries, as of `stamp` (inode, mtime_ns)."""

    stamp: tuple[int, int]
    files: list[tuple[str, int]] = field(default_factory=list)  # (name, salted hash)
    folders: list[tuple[str, int]] = field(default_factory=list)


def _hidden(name: str) -> bool:
    first, last = name[0], name[-1]
    return first == "." or last == "~" or (first == "#" and last == "#" and len(name) > 1)


def workspace_fingerprint(root: Path, max_entries: int = MAX_ENTRIES) -> Fingerprint:
    """One walk of `root`, with nothing reused from earlier walks."""
    return Fingerprinter(root, max_entries)()


class Fingerprinter:
    """Fingerprints one workspace each time it is called, reusing unchanged listings."""

    def __init__(self, root: Path, max_entries: int = MAX_ENTRIES) -> None:
        self.root = str(root)
        self.max_entries = max_entries
        self._listings: dict[str, _Listing] = {}
        self._rules = ""
        # One walk at a time: two turns' guards may call it from two worker threads.
        self._walking = threading.Lock()

    def __call__(self) -> Fingerprint:
        with self._walking:
            return self._walk()

    def _walk(self) -> Fingerprint:
        ignore = self._ignore_rules()
        digest, entries = 0, 0
        pending = [(self.root, "")]
        while pending:
            path, prefix = pending.pop()
            listing, fd = self._open(path, prefix, ignore)
            if fd is None:
                digest += hash(prefix) ^ 1  # unreadable: a stable mark of its own
                continue
            try:
                if entries + len(listing.files) + len(listing.folders) > self.max_entries:
                    return Fingerprint(digest=digest & _MASK, entries=entries, capped=True)
                entries += len(listing.files) + len(listing.folders)
                digest += sum(salted for _, salted in listing.folders)
                digest += _files_digest(fd, listing.files)
            finally:
                os.close(fd)
            pending.extend((f"{path}/{name}", f"{prefix}{name}/") for name, _ in listing.folders)
        return Fingerprint(digest=digest & _MASK, entries=entries, capped=False)

    def _ignore_rules(self) -> GitIgnore | None:
        """The root .gitignore; listings made under other rules are dropped."""
        ignore = GitIgnore.for_root(Path(self.root))
        if ignore.source != self._rules:
            self._listings.clear()
            self._rules = ignore.source
        return ignore if ignore.has_rules else None

    def _open(
        self, path: str, prefix: str, ignore: GitIgnore | None
    ) -> tuple[_Listing, int | None]:
        """The folder's listing (reused or fresh) and an open descriptor, or None."""
        try:
            fd = os.open(path, _DIR_FLAGS)
        except OSError:
            return _Listing(stamp=(0, 0)), None
        try:
            info = os.fstat(fd)
            stamp = (info.st_ino, info.st_mtime_ns)
            cached = self._listings.get(path)
            if cached is not None and cached.stamp == stamp:
                return cached, fd
            listing = _list(fd, prefix, stamp, ignore)
        except OSError:
            os.close(fd)
            return _Listing(stamp=(0, 0)), None
        if time.time_ns() - info.st_mtime_ns > SETTLE_NS:
            self._listings[path] = listing
        else:
            self._listings.pop(path, None)
        return listing, fd


def _list(fd: int, prefix: str, stamp: tuple[int, int], ignore: GitIgnore | None) -> _Listing:
    listing = _Listing(stamp=stamp)
    salt = hash(prefix)
    with os.scandir(fd) as scan:
        for entry in scan:
            name = entry.name
            if _hidden(name):
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
            if ignore is not None and ignore.ignored(prefix + name, name, is_dir):
                continue
            if is_dir:
                listing.folders.append((name, hash(name) ^ salt ^ 2))
            else:
                listing.files.append((name, hash(name) ^ salt))
    return listing


def _files_digest(fd: int, files: list[tuple[str, int]]) -> int:
    """The files' part of the sum: name, size and mtime of each, by `lstat`."""
    total = 0
    lstat = os.lstat
    for name, salted in files:
        try:
            info = lstat(name, dir_fd=fd)
        except OSError:
            continue  # vanished while we looked
        total += salted + info.st_mtime_ns * 3 + info.st_size
    return total


def workspace_probe(root: Path) -> Fingerprinter:
    """A progress probe for the agent loop: call it for the workspace's fingerprint."""
    return Fingerprinter(root)
