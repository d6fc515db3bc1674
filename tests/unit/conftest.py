"""What every unit test runs under: the code index's parse workers at the test's own
priority.

In the daemon they run at niceness 10 (`parse_pool.NICENESS`), so the daemon answers
its clients first. Under the suite's xdist workers, which keep both cores busy at
niceness 0, a niced worker got a few percent of a core: a test whose bracket bombs
need two seconds of processor time took 30 to 50 s of the clock. The niceness is
scheduling, not behaviour any unit test checks; the stall benches measure it
(bench/daemon_stall.py).
"""

from __future__ import annotations

import pytest

from coding_harness.daemon.index import parse_pool


@pytest.fixture(autouse=True)
def parse_workers_at_test_priority(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parse_pool, "NICENESS", 0)
