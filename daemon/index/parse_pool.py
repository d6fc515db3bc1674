"""Parsing a batch of files in child processes: the daemon never runs tree-sitter.

tree-sitter holds the interpreter lock while it parses and while a query runs,
and a query cannot be bounded by time inside the daemon (py-tree-sitter 0.26's
query progress callback outlives its options and crashes); its time is not
bounded by the file's size either: a 64 KB file of unclosed brackets, or a Ruby
chain `a.b.b.b...`, keeps one query busy for 3 s, during which every session's
event loop would wait. So every batch, one changed file too (a child starts in
about 0.1 s), is parsed by at most `WORKERS` children (`parse_worker.py`, `python
-I`, no secret from the daemon's environment), each given its share of the paths.

A child answers one line per file, in order. One that ends before answering
(its timer after `FILE_SECONDS` of processor time on one file, a crash, a line that is not an
answer) has the file it was on listed with the reason, and a new child goes on
with the rest of its share. `room` is asked, answer by answer, for the memory
the file's tags take (`budget.py`). The paths come most wanted first and each
child's share keeps that order; as children answer side by side, a file the room
refuses makes room by giving back the tags of this batch's files that come after
it, and if it still does not fit its child is stopped: the rest of its share
comes after it. So the files kept are the first ones, and those not kept are
returned as left out. `stop` or `BUILD_TIME_LIMIT` ends the batch with
`ParseCancelled`.
"""

from __future__ import annotations

import heapq
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from coding_harness.daemon.index.parse_worker import decode
from coding_harness.daemon.index.tags import PARSE_SECONDS, FileTags

WORKERS = max(1, min(2, os.cpu_count() or 1))
BUILD_TIME_LIMIT = 900.0  # seconds for one batch
FILE_SECONDS = PARSE_SECONDS  # a child still on one file after this is ended
NICENESS = 10  # how far below the daemon a child runs (os.nice): the daemon answers first
MAX_LINE_BYTES = 16 * 2**20  # an answer: the tags caps of `tags.py` keep it under ~12 MB
_ENV_KEPT = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR")
_ARGV = [sys.executable, "-I", "-m", "coding_harness.daemon.index.parse_worker"]

Progress = Callable[[int], None]  # files parsed so far in this batch


class Room(Protocol):
    """The memory the index may still give to tags (`budget.Grants`)."""

    def take(self, tags: FileTags) -> bool: ...

    def give_back(self, tags: FileTags) -> None: ...


class ParseCancelled(Exception):
    """The batch was stopped (`stop` set) or ran past its time limit."""


@dataclass(kw_only=True, slots=True)
class Batch:
    parsed: dict[str, FileTags]
    left_out: list[str]  # not parsed, or not kept: the memory budget is spent


def parse_files(
    root: Path,
    paths: list[str],
    progress: Progress | None = None,
    stop: threading.Event | None = None,
    room: Room | None = None,
) -> Batch:
    """The paths' tags, in child processes; `paths` most wanted first (see the
    module's docstring)."""
    run = _Run(root, progress, room, {path: at for at, path in enumerate(paths)})
    shares = [share for i in range(WORKERS) if (share := paths[i::WORKERS])]
    threads = [threading.Thread(target=run.share, args=(share,), daemon=True) for share in shares]
    deadline = time.monotonic() + BUILD_TIME_LIMIT
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            while thread.is_alive():
                thread.join(0.1)
                if (stop is not None and stop.is_set()) or time.monotonic() > deadline:
                    raise ParseCancelled
    finally:
        run.end()
        for thread in threads:
            thread.join(1.0)
    if run.error is not None:
        raise run.error
    return Batch(parsed=run.parsed, left_out=[p for p in paths if p not in run.parsed])


def _death(code: int) -> str:
    """Why a child ended on a file, from its exit status."""
    if code == -signal.SIGPROF:
        return f"it took the parser more than {FILE_SECONDS:g} s of processor time"
    return f"the parser process died on it (exit status {code})"


class _Run:
    """One batch's children, the tags they answered, and whether it has ended."""

    def __init__(
        self, root: Path, progress: Progress | None, room: Room | None, rank: dict[str, int]
    ) -> None:
        self._root = root
        self._progress = progress
        self._room = room
        self._rank = rank  # a path's place in the batch: lower is wanted more
        self.parsed: dict[str, FileTags] = {}
        self._kept: list[tuple[int, str]] = []  # (-rank, path): the least wanted on top
        self.error: OSError | None = None
        self._children: list[subprocess.Popen[bytes]] = []
        self._ended = False
        self._lock = threading.Lock()

    def share(self, share: list[str]) -> None:
        """Parse `share` in children, one after another while one ends on a file."""
        at = 0
        while at < len(share):
            child = self._spawn()
            if child is None:
                return
            at += self._read(child, share[at:])
            why = _death(child.wait())
            if at < len(share) and not self._put(share[at], FileTags(skipped=why)):
                return
            at += 1

    def _fits(self, path: str, tags: FileTags) -> bool:
        """Take room for `path`'s tags, giving back that of files wanted less."""
        if self._room is None:
            return True
        rank = self._rank[path]
        while not self._room.take(tags):
            if not self._kept or -self._kept[0][0] < rank:
                return False
            _, dropped = heapq.heappop(self._kept)
            self._room.give_back(self.parsed.pop(dropped))
        heapq.heappush(self._kept, (-rank, path))
        return True

    def end(self) -> None:
        """Stop: no more answers are taken, and every child still running is killed."""
        with self._lock:
            self._ended = True
            for child in self._children:
                if child.poll() is None:
                    child.kill()
                    child.wait()

    def _spawn(self) -> subprocess.Popen[bytes] | None:
        env = {name: os.environ[name] for name in _ENV_KEPT if name in os.environ}
        with self._lock:
            if self._ended:
                return None
            try:
                child = subprocess.Popen(
                    [*_ARGV, str(self._root), repr(FILE_SECONDS), str(NICENESS)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    env=env,
                    cwd="/",
                )
            except OSError as exc:
                self.error = exc
                return None
            self._children.append(child)
            return child

    def _read(self, child: subprocess.Popen[bytes], paths: list[str]) -> int:
        """Feed `paths` to `child` and take its answers; how many it gave, in order."""
        assert child.stdout is not None
        feeder = threading.Thread(target=_feed, args=(child, paths), daemon=True)
        feeder.start()
        answered = 0
        with child.stdout:
            while answered < len(paths):
                line = child.stdout.readline(MAX_LINE_BYTES)
                if not line.endswith(b"\n"):
                    break  # the child ended, or the line is too long to be an answer
                try:
                    path, tags = decode(json.loads(line))
                except (ValueError, TypeError, KeyError, IndexError):
                    break
                if path != paths[answered] or not self._put(path, tags):
                    break
                answered += 1
            if child.poll() is None and answered < len(paths):
                child.kill()
        feeder.join()
        return answered

    def _put(self, path: str, tags: FileTags) -> bool:
        """Take one file's tags; False once the batch has ended, or there is no room
        for them (the rest of the share would not fit either: its child is stopped)."""
        with self._lock:
            if self._ended or not self._fits(path, tags):
                return False
            self.parsed[path] = tags
            done = len(self.parsed)
        if self._progress is not None:
            self._progress(done)
        return True


def _feed(child: subprocess.Popen[bytes], paths: list[str]) -> None:
    assert child.stdin is not None
    try:
        with child.stdin:
            for path in paths:
                child.stdin.write(json.dumps(path).encode() + b"\n")
    except OSError:
        pass  # the child ended: the file it was on is marked
