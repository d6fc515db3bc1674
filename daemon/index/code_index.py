"""One workspace's code index: every source file's tags, and what ranks them.

`CodeIndex.load` (blocking, as every call here but the readers: run it in a worker
thread) reads the stored rows and ranks them, so a restarted daemon answers from
them before it has looked at a file (`checked` says when it has).
`CodeIndex.refresh` loads the stored rows the first time if `load` did not, walks
the workspace (`walk.py`: hidden names skipped, nested .gitignore files
honoured), re-parses only the files whose size or mtime
changed (in child processes, `parse_pool.py`), drops the ones that are gone, saves
the difference and ranks the files again (`rank.py`; or leaves that to `rerank`,
later, when asked to). Only one refresh runs at a time.

The tags held are within a memory budget (`budget.py`, shared by the daemon's
indexes). Changed files are parsed nearest the workspace root first (by depth,
then path; `parse_pool.py` keeps that order when the budget runs out), and once
it is spent the rest are held without their tags
(`left_out`: by size and mtime alone, not counted, so they are not parsed again
at every refresh; they are parsed again when they change or the index is loaded
anew) and `notice()` says the index is partial. Rows loaded from disk are
granted in the same order. Readers (the repo map,
`find_symbol`) take the data lock, which a refresh holds only while it applies
what it parsed, so a long parse never holds them up.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from coding_harness.daemon.index.budget import LEFT_OUT, Grants, MemoryBudget, tags_bytes
from coding_harness.daemon.index.languages import language_of
from coding_harness.daemon.index.parse_pool import parse_files
from coding_harness.daemon.index.persist import IndexFile, StoredFile
from coding_harness.daemon.index.rank import FileRanks, file_graph, rank_graph, update_graph
from coding_harness.daemon.index.tags import Definition, FileTags
from coding_harness.daemon.index.walk import SourceFile, WalkCache, walk_workspace

MAX_SOURCE_FILES = 30_000  # files indexed; past it the rest of the tree is left out

Progress = Callable[[int, int], None]  # (files parsed, files to parse)


@dataclass(kw_only=True, slots=True, frozen=True)
class Refresh:
    parsed: int
    removed: int
    files: int
    seconds: float
    capped: bool
    left_out: int  # files held without their tags: the memory budget is spent


@dataclass(frozen=True, slots=True)
class Located:
    path: str
    definition: Definition


class CodeIndex:
    def __init__(
        self, root: Path, store: IndexFile | None = None, budget: MemoryBudget | None = None
    ) -> None:
        self.root = root
        self._store = store
        self.budget = budget or MemoryBudget()
        self.left_out: set[str] = set()  # held without tags: over the memory budget
        self.files: dict[str, StoredFile] = {}
        # name -> paths defining it, as tuples: untracked by the garbage collector, like
        # the definitions (see tags.Definition), and safe to share with the ranking.
        self.defined: dict[str, tuple[str, ...]] = {}
        self.used_by: dict[str, int] = {}  # name -> number of files referencing it
        self.ranks = FileRanks.empty()
        self.loaded = False
        self.checked = False  # a refresh has compared the tags with the files on disk
        self.stale = True  # the ranks are not those of the current tags
        # Since the last ranking: the files parsed again or gone, and the names whose
        # defining files changed (the links of the files using them change).
        self._touched: set[str] = set()
        self._redefined: set[str] = set()
        self.capped = False
        self.data_lock = threading.Lock()
        self._walks = WalkCache()  # the listings of the last walk, for the next
        self._refresh_lock = threading.Lock()

    # -- refreshing ------------------------------------------------------
    def refresh(
        self,
        progress: Progress | None = None,
        stop: threading.Event | None = None,
        rank: bool = True,
    ) -> Refresh:
        """Bring the index up to date with the files on disk (see the module's docstring).

        `rank=False` leaves the ranks as they were (`stale` says whether they are) for
        `rerank` to bring up to date later: a one-file update need not wait for them."""
        with self._refresh_lock:
            started = time.monotonic()
            if not self.loaded:
                self._load()
            walk = walk_workspace(
                self.root, max_files=MAX_SOURCE_FILES, keep=_is_source, cache=self._walks
            )
            capped = walk.capped
            current = {f.path: f for f in walk.files}
            changed = [
                path
                for path, seen in current.items()
                if (old := self.files.get(path)) is None
                or (old.size, old.mtime_ns) != (seen.size, seen.mtime_ns)
            ]
            changed.sort(key=_nearest_root)
            removed = [path for path in self.files if path not in current]
            if removed:  # first: their room in the budget is free for the files parsed
                self._apply({}, removed)

            def parsed_so_far(done: int) -> None:
                if progress is not None:
                    progress(done, len(changed))

            if progress is not None:
                progress(0, len(changed))
            room = Grants(self.budget, self.root)
            try:
                batch = parse_files(self.root, changed, parsed_so_far, stop, room)
            except BaseException:  # what was granted to tags never applied is free again
                room.cancel()
                raise
            fresh = {path: _entry(current[path], tags) for path, tags in batch.parsed.items()}
            held_out = {path: _entry(current[path], _LEFT_OUT) for path in batch.left_out}
            if fresh or held_out:
                self._apply({**fresh, **held_out}, [])
            if rank and self.stale:
                self._rank()
            if self._store is not None and (fresh or removed):
                self._store.save(fresh, removed, whole=False)
            self.capped = capped
            self.checked = True
            return Refresh(
                parsed=len(fresh),
                removed=len(removed),
                files=len(self.files),
                seconds=time.monotonic() - started,
                capped=capped,
                left_out=len(batch.left_out),
            )

    def rerank(self) -> None:
        """Rank the files again if what they define or use changed since the last ranking."""
        with self._refresh_lock:
            if self.stale:
                self._rank()

    def _rank(self) -> None:
        """Rank from a copy of the tags taken under the data lock (entries are replaced,
        never changed), so readers wait only for the copy."""
        with self.data_lock:
            previous, touched, redefined = self.ranks, self._touched, self._redefined
            files = dict(self.files)
            defined = dict(self.defined)  # the tuples are never changed, only replaced
            self._touched, self._redefined = set(), set()
        try:
            if previous.paths and set(previous.paths) == files.keys():
                dirty = touched | _users_of(files, redefined)
                graph = update_graph(previous, files, defined, dirty)
            else:  # files came or went: positions move, so the graph is made anew
                graph = file_graph(files, defined)
            ranks = rank_graph(graph, previous=previous)
        except BaseException:
            with self.data_lock:  # what was not ranked is ranked next time
                self._touched |= touched
                self._redefined |= redefined
            raise
        with self.data_lock:
            self.ranks = ranks
            self.stale = bool(self._touched or self._redefined)

    def load(self) -> bool:
        """Read the stored rows and rank them, before any refresh; False when there are
        none to answer from (no file, another workspace's or version's, or damaged: the
        first refresh builds the index)."""
        with self._refresh_lock:
            found = self._load() if not self.loaded else None
            if found and self.files and self.stale:
                self._rank()
            return bool(found)

    def _load(self) -> bool:
        """Whether the store held this workspace's index (the rows are held either way)."""
        found = self._store.load() if self._store is not None else None
        stored = found or {}
        with self.data_lock:
            self.files = {}
            self.defined, self.used_by = {}, {}
            for path in sorted(stored, key=_nearest_root):
                entry = stored.pop(path)
                if not self.budget.take(self.root, tags_bytes(entry.tags)):
                    entry.tags = _LEFT_OUT
                self._link(path, entry)
        self.loaded = True
        return found is not None

    def notice(self) -> str | None:
        """What to tell a reader of a partial index; None when it holds every file's tags.
        Without the data lock (two lengths): the event loop asks it for `daemon.status`."""
        left, total = len(self.left_out), len(self.files)
        if not left:
            return None
        return (
            f"the code index is partial: it holds the tags of {total - left:,} of {total:,} "
            f"source files, its memory budget ({self.budget.describe()}) spent; the files "
            "nearest the workspace root came first; grep finds what it lacks"
        )

    def _apply(self, fresh: dict[str, StoredFile], removed: list[str]) -> None:
        with self.data_lock:
            for path in removed:
                self._redefined |= _names(self.files.get(path))
                self._unlink(path)
            for path, entry in fresh.items():
                self._redefined |= _names(self.files.get(path)) ^ _names(entry)
                self._unlink(path)
                self._link(path, entry)
            self._touched |= {*removed, *fresh}
            self.stale = True

    def _link(self, path: str, entry: StoredFile) -> None:
        self.files[path] = entry
        if entry.tags is _LEFT_OUT:
            self.left_out.add(path)
        for name in entry.tags.defined_names():
            self.defined[name] = (*self.defined.get(name, ()), path)
        for name in entry.tags.references:
            self.used_by[name] = self.used_by.get(name, 0) + 1

    def _unlink(self, path: str) -> None:
        entry = self.files.pop(path, None)
        if entry is None:
            return
        if entry.tags is _LEFT_OUT:
            self.left_out.discard(path)
        else:
            self.budget.give_back(self.root, tags_bytes(entry.tags))
        for name in entry.tags.defined_names():
            kept = tuple(p for p in self.defined.get(name, ()) if p != path)
            if kept:
                self.defined[name] = kept
            else:
                self.defined.pop(name, None)
        for name in entry.tags.references:
            left = self.used_by.get(name, 1) - 1
            if left > 0:
                self.used_by[name] = left
            else:
                self.used_by.pop(name, None)

    # -- reading ---------------------------------------------------------
    def definitions(self, name: str) -> list[Located]:
        """Where `name` is defined, by path and line."""
        with self.data_lock:
            found = [
                Located(path, definition)
                for path in sorted(self.defined.get(name, ()))
                for definition in self.files[path].tags.definitions
                if definition.name == name
            ]
        return found

    def referencing(self, name: str) -> list[tuple[str, int]]:
        """The files that use `name`, with how often, most uses first."""
        with self.data_lock:
            found = [
                (path, count)
                for path, entry in self.files.items()
                if (count := entry.tags.references.get(name, 0))
            ]
        return sorted(found, key=lambda item: (-item[1], item[0]))


_LEFT_OUT = FileTags(skipped=LEFT_OUT)  # one shared record: held by size and mtime alone


def _entry(seen: SourceFile, tags: FileTags) -> StoredFile:
    language = language_of(seen.path) or ""
    return StoredFile(size=seen.size, mtime_ns=seen.mtime_ns, language=language, tags=tags)


def _nearest_root(path: str) -> tuple[int, str]:
    return path.count("/"), path


def _names(entry: StoredFile | None) -> set[str]:
    return entry.tags.defined_names() if entry is not None else set()


def _is_source(name: str) -> bool:
    return language_of(name) is not None


def _users_of(files: dict[str, StoredFile], names: set[str]) -> set[str]:
    """The files that use any of `names`."""
    if not names:
        return set()
    return {path for path, entry in files.items() if not names.isdisjoint(entry.tags.references)}
