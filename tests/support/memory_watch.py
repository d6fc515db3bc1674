"""A watch on a process's resident memory, for tests that hold a bound on it.

`RssWatch(pid, limit)` polls the process's RSS in a thread and keeps the peak;
past `limit` bytes it kills the process, so a test of the bound fails (the peak
says by how much) without filling the machine first. Used as a context manager.
"""

from __future__ import annotations

import contextlib
import threading

import psutil

POLL_SECONDS = 0.02


class RssWatch:
    def __init__(self, pid: int, limit: int) -> None:
        self.process = psutil.Process(pid)
        self.limit = limit
        self.peak = 0
        self.killed = False
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> RssWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join(timeout=5)

    def _watch(self) -> None:
        while not self._done.wait(POLL_SECONDS):
            try:
                rss = self.process.memory_info().rss
            except psutil.Error:
                return
            self.peak = max(self.peak, rss)
            if rss > self.limit and not self.killed:
                self.killed = True
                with contextlib.suppress(psutil.Error):
                    self.process.kill()
