"""The daemon's code indexes: one per workspace, shared by every session on it.

`IndexHub.current(root)` is what a turn calls as it starts. A workspace seen for
the first time gets its stored index loaded (a worker thread reads its file and
ranks it) and then refreshed or built in the background (many files are parsed
in child processes). A stored index answers as soon as it is loaded, while its
first refresh runs behind it (`CodeIndex.checked` is False until that ends: the
files changed while the daemon was down are not in it yet); without one (no
file, or one that cannot be used) the turn goes on without a map: it is not held
up by a cold build. Once built, each call refreshes the
index first (re-parsing only what changed) and returns it (a submit starts that
refresh with `warm`, and the turn takes one begun since its submit as current); the files are ranked
again afterwards, in the background, so the map of that turn uses the ranks of a
moment before (the tags themselves are current). One build or refresh runs per
workspace at a time; a call that finds one running does not wait for a cold
build, and waits for a refresh. At most `MAX_INDEXES` are held, and none unused
for `IDLE_SECONDS`: a dropped one loads warm from its file when next asked for.
Their tags share one memory budget (`budget.py`): a refresh that finds less than
a workspace's share free first drops the least recently used idle indexes.

`status()` reports, per workspace, the first build of this daemon's life: files
parsed (`done` of `total`; after a restart only what changed since) and seconds.
A first build that parses `ANNOUNCE_FILES` files or more, or lasts over a
second, sends `index.state` events to the sessions on the workspace (at its
start, or after that second), about once a second, and when it ends; a small
quick one sends none (its state is in `status()` and `session.map`); a failure
is always sent; an index over its budget says so in `notice`; `status()` feeds
`harness daemon status`. Closing the hub stops the builds.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coding_harness.daemon.index.budget import MemoryBudget
from coding_harness.daemon.index.code_index import CodeIndex, Refresh
from coding_harness.daemon.index.parse_pool import ParseCancelled
from coding_harness.daemon.index.persist import IndexFile, index_path

log = logging.getLogger(__name__)

PROGRESS_SECONDS = 1.0
RETRY_SECONDS = 60.0  # after a failed build, before another is started
CLOSE_SECONDS = 5.0
MAX_INDEXES = 8  # held in memory at once; the least recently used goes first
IDLE_SECONDS = 7_200.0  # an index nobody asked for this long is dropped from memory
ANNOUNCE_FILES = 500  # a first build parsing this many files is announced at its start
UNINDEXED = (Path("/"),)  # and the home folder: whole trees of unrelated files
NOT_INDEXED = "the home folder and / are not indexed: open the project's own folder"
BUILDING, READY, FAILED = "building", "ready", "failed"

# Told of a workspace's index state: (root, the `index.state` event's data).
Announce = Callable[[Path, dict[str, Any]], None]


@dataclass(kw_only=True, slots=True)
class _Entry:
    index: CodeIndex
    state: str = BUILDING
    done: int = 0
    total: int = 0
    seconds: float = 0.0
    error: str | None = None
    built: bool = False  # a first build finished (a later failure keeps the old data)
    loading: asyncio.Task[bool] | None = None  # reads the stored index: True if it answers
    task: asyncio.Task[None] | None = None
    ranking: asyncio.Task[None] | None = None  # ranks the files again after an update
    stop: threading.Event = field(default_factory=threading.Event)
    last_told: float = 0.0
    failed_at: float = 0.0
    used_at: float = 0.0  # when a session last asked for it
    refreshed_from: float = 0.0  # when the latest refresh (or build) began its work

    def to_wire(self) -> dict[str, Any]:
        return {
            "root": str(self.index.root),
            "state": self.state,
            "files": len(self.index.files),
            "done": self.done,
            "total": self.total,
            "seconds": round(self.seconds, 3),
            "notice": self.index.notice(),
            "error": self.error,
        }


class IndexHub:
    def __init__(
        self,
        state_dir: Path | None,
        announce: Announce | None = None,
        budget: MemoryBudget | None = None,
    ) -> None:
        self._state_dir = state_dir
        self._announce = announce
        self.budget = budget or MemoryBudget()
        self._entries: dict[Path, _Entry] = {}
        self._stopping = False

    def entry_state(self, root: Path) -> dict[str, Any] | None:
        entry = self._entries.get(root)
        return entry.to_wire() if entry is not None else None

    def index_of(self, root: Path) -> CodeIndex | None:
        """The workspace's index as it is, without a refresh; None before its first build
        unless its stored index was loaded."""
        entry = self._entries.get(root)
        return entry.index if entry is not None and (entry.built or _stored(entry)) else None

    def status(self) -> list[dict[str, Any]]:
        return [entry.to_wire() for entry in self._entries.values()]

    def warm(self, root: Path) -> None:
        """Start the workspace's first build, or a refresh, now (a session opened, a turn
        was submitted): the turn that asks for the map finds it done or under way."""
        self._start(root)

    async def current(self, root: Path, since: float | None = None) -> CodeIndex | None:
        """The workspace's index brought up to date, or None while its first build runs
        (or when the folder is not indexed: the home folder or /). A refresh started at
        `since` (a `time.monotonic()`) or later counts as up to date: a turn passes the
        time it was submitted, when `warm` started one. Before its first refresh ends,
        the stored index as soon as it is loaded, not waiting for that refresh."""
        entry = self._start(root, since)
        if not entry.built:
            if entry.loading is not None and await asyncio.shield(entry.loading):
                return entry.index
            return None
        assert entry.task is not None
        await asyncio.shield(entry.task)
        return entry.index

    def _start(self, root: Path, since: float | None = None) -> _Entry:
        """The workspace's entry, with a build or refresh running unless it is refused
        (or one started at `since` or later has ended)."""
        entry = self._entries.get(root)
        if entry is None:
            self._evict()
            store = self._store(root)
            entry = self._entries[root] = _Entry(index=CodeIndex(root, store, self.budget))
            if root in UNINDEXED or root == Path.home().resolve():
                entry.state, entry.error = FAILED, NOT_INDEXED
            elif store is not None and not self._stopping:
                entry.loading = asyncio.create_task(self._load(entry), name=f"index load {root}")
        entry.used_at = time.monotonic()
        if entry.error == NOT_INDEXED or self._stopping:
            return entry
        if entry.state == FAILED and time.monotonic() < entry.failed_at + RETRY_SECONDS:
            return entry  # a build that just failed is not started again at every call
        fresh = since is not None and entry.built and entry.refreshed_from >= since
        if (entry.task is None or entry.task.done()) and not fresh:
            entry.task = asyncio.create_task(self._refresh(entry), name=f"index {root}")
        return entry

    async def built(self, root: Path) -> CodeIndex:
        """The workspace's index once its first build ended (started if need be)."""
        await self.current(root)
        entry = self._entries[root]
        while entry.task is not None and not entry.task.done():
            await asyncio.shield(entry.task)
        return entry.index

    def _evict(self) -> None:
        """Forget the indexes not used for `IDLE_SECONDS`, and past `MAX_INDEXES` the least
        recently used: their files stay, so coming back loads them warm."""
        now = time.monotonic()
        idle = [
            root
            for root, entry in sorted(self._entries.items(), key=lambda item: item[1].used_at)
            if entry.task is None or entry.task.done()
        ]
        excess = max(0, len(self._entries) + 1 - MAX_INDEXES)
        for position, root in enumerate(idle):
            if position < excess or now - self._entries[root].used_at > IDLE_SECONDS:
                self._drop(root)

    def _make_room(self, keep: Path) -> None:
        """Drop the least recently used idle indexes but `keep`'s while less than a
        workspace's share of the common budget is free."""
        idle = [
            root
            for root, entry in sorted(self._entries.items(), key=lambda item: item[1].used_at)
            if root != keep and (entry.task is None or entry.task.done())
        ]
        for root in idle:
            if self.budget.free() >= self.budget.workspace_bytes:
                return
            if self.budget.held(root):
                self._drop(root)

    def _drop(self, root: Path) -> None:
        entry = self._entries.pop(root)
        entry.stop.set()
        self.budget.forget(root)

    def _store(self, root: Path) -> IndexFile | None:
        if self._state_dir is None:
            return None
        return IndexFile(index_path(self._state_dir, root), root)

    async def _load(self, entry: _Entry) -> bool:
        """Read the stored index in a worker thread; True when it can answer."""
        try:
            return await asyncio.to_thread(entry.index.load)
        except Exception:  # the first refresh builds the index instead
            log.exception("the stored code index of %s could not be loaded", entry.index.root)
            return False

    async def _refresh(self, entry: _Entry) -> None:
        if entry.loading is not None:  # the stored index first: it answers meanwhile
            await asyncio.shield(entry.loading)
        started = entry.refreshed_from = time.monotonic()  # the walk sees the files from now
        self._make_room(entry.index.root)
        loop = asyncio.get_running_loop()
        first = not entry.built

        def progress(done: int, total: int) -> None:
            if not first:
                return
            entry.done, entry.total = done, total
            entry.seconds = time.monotonic() - started
            # A small build that ends within a second is never announced.
            big = total >= ANNOUNCE_FILES and not entry.last_told
            if big or time.monotonic() - max(entry.last_told, started) >= PROGRESS_SECONDS:
                entry.last_told = time.monotonic()
                loop.call_soon_threadsafe(self._tell, entry)

        try:
            report: Refresh = await asyncio.to_thread(
                entry.index.refresh, progress, entry.stop, first
            )
        except ParseCancelled:  # the daemon stops, or a batch ran out of time
            if entry.stop.is_set():
                return
            self._failed(entry, started, "parsing took longer than its time limit")
            return
        except Exception as exc:  # a parser or disk fault: said once, the old data stays
            log.exception("the code index of %s could not be refreshed", entry.index.root)
            self._failed(entry, started, str(exc))
            return
        entry.built, entry.state, entry.error = True, READY, None
        if first:  # done and total stay the first build's: what the daemon's start cost
            entry.seconds = report.seconds
            entry.done = entry.total = report.parsed
            if entry.last_told:  # its start was announced: so is its end
                self._tell(entry)
        elif entry.index.stale and (entry.ranking is None or entry.ranking.done()):
            name = f"index ranking {entry.index.root}"
            entry.ranking = asyncio.create_task(self._rerank(entry), name=name)

    def _failed(self, entry: _Entry, started: float, why: str) -> None:
        entry.state, entry.error = FAILED, f"the code index could not be built: {why}"
        entry.seconds = time.monotonic() - started
        entry.failed_at = time.monotonic()
        self._tell(entry)

    async def _rerank(self, entry: _Entry) -> None:
        try:
            await asyncio.to_thread(entry.index.rerank)
        except Exception:  # the old ranks stay; the next update ranks again
            log.exception("the files of %s could not be ranked", entry.index.root)

    def _tell(self, entry: _Entry) -> None:
        if self._announce is not None:
            self._announce(entry.index.root, entry.to_wire())

    async def close(self) -> None:
        """Stop every build (child parsers are killed) and wait a little for the threads:
        a walk or a file's parse in a thread cannot be interrupted, and is not waited for
        past `CLOSE_SECONDS`."""
        self._stopping = True
        tasks: list[asyncio.Task[Any]] = []
        for entry in self._entries.values():
            entry.stop.set()
            running = (entry.loading, entry.task, entry.ranking)
            tasks.extend(task for task in running if task is not None)
        if tasks:
            await asyncio.wait(tasks, timeout=CLOSE_SECONDS)


def _stored(entry: _Entry) -> bool:
    """The entry's stored index was loaded and answers until its first refresh ends."""
    loading = entry.loading
    return loading is not None and loading.done() and not loading.cancelled() and loading.result()
