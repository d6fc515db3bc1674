"""A thread that notices when this process's interpreter is held: it wakes every
few milliseconds and keeps the longest time it could not."""

from __future__ import annotations

import threading
import time


class StallWatch:
    """`with StallWatch() as watch: ...`, then `watch.longest` (seconds)."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> StallWatch:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        last = time.monotonic()
        while not self._stop.wait(0.005):
            now = time.monotonic()
            self.longest = max(self.longest, now - last)
            last = now
