"""Fixtures for the real-server suite (`make test-servers`), left out of `make test`.

Servers start once per run, lazily, one per (program, context size); each test
gets a fresh recording proxy in front of its server and a temporary HOME (the
integration suite's `sandbox`) whose config points `harness` at that proxy.
What each test measured is printed at the end and kept in `figures.json` in
the cache folder; the servers' own logs are in its `logs/servers/`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pytest

from tests.integration.conftest import Sandbox, calc_project, sandbox
from tests.servers import real_servers
from tests.servers.real_servers import RunningServer
from tests.servers.recording_proxy import RecordingProxy
from tests.servers.setup_servers import cache_dir

__all__ = ["Sandbox", "calc_project", "sandbox"]

FIGURES: list[dict[str, object]] = []


@dataclass(kw_only=True, slots=True)
class ServerPool:
    """The servers started so far; each starts on first use and stops at the end."""

    log_dir: Path
    running: dict[tuple[str, int], RunningServer] = field(default_factory=dict)

    def get(self, name: str, context: int) -> RunningServer:
        key = (name, context)
        if key not in self.running:
            kind = real_servers.find_server(name)
            if kind is None:
                pytest.skip(real_servers.why_missing(name))
            self.running[key] = real_servers.start(kind, context, self.log_dir)
        return self.running[key]

    def stop_all(self) -> None:
        for server in self.running.values():
            server.stop()


@pytest.fixture(scope="session")
def server_pool() -> Iterator[ServerPool]:
    if real_servers.model_path() is None:
        pytest.skip("the tiny model is not in the cache: run `make test-servers`")
    log_dir = cache_dir() / "logs" / "servers"  # each run overwrites its servers' logs
    log_dir.mkdir(parents=True, exist_ok=True)
    pool = ServerPool(log_dir=log_dir)
    try:
        yield pool
    finally:
        pool.stop_all()


@pytest.fixture
def proxy_for(server_pool: ServerPool) -> Iterator[object]:
    """`proxy_for(name, context)`: a recording proxy in front of that server."""
    started: list[RecordingProxy] = []

    def make(name: str, context: int = 8192) -> tuple[RunningServer, RecordingProxy]:
        server = server_pool.get(name, context)
        proxy = RecordingProxy(upstream_port=server.port).start()
        started.append(proxy)
        return server, proxy

    yield make
    for proxy in started:
        proxy.stop()


def write_config(
    box: Sandbox, endpoint: str, profile: Mapping[str, object] | None = None, **agent: object
) -> None:
    """Two profiles on one endpoint: `stream` (type openai) and `whole` (type mlx);
    `profile` adds settings to both, `agent` to the agent section."""
    common = {
        **(profile or {}),
        "endpoint": endpoint,
        "model": "smollm2",
        "generation": {"temperature": 0, "seed": 7, "max_tokens": 160},
        "retry": {"attempts": 2, "base_delay": 0.01, "max_delay": 0.05},
        "notes": False,  # no turn-close notes call to land among the next test's requests
    }
    config = {
        "default_provider": "stream",
        "providers": {"stream": {"type": "openai", **common}, "whole": {"type": "mlx", **common}},
        "agent": {"max_iterations": 2, **agent},
    }
    (box.home / ".coding_harness.json").write_text(json.dumps(config))


@dataclass(kw_only=True, slots=True)
class Figure:
    server: str
    test: str
    requests: int
    statuses: list[int]
    prompt_tokens: int
    completion_tokens: int
    turn_seconds: list[float]
    largest_prompt: int = 0  # the most prompt tokens one request had, as the server counted


def record_figure(figure: Figure) -> None:
    FIGURES.append(asdict(figure))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not FIGURES:
        return
    write = terminalreporter.write_line
    terminalreporter.section("real-server figures")
    head = f"{'server':<18} {'test':<34} {'req':>3} {'prompt':>7} {'compl':>6} {'max':>5}"
    write(f"{head}  turn seconds")
    for row in FIGURES:
        seconds = ", ".join(f"{s:.1f}" for s in row["turn_seconds"])  # type: ignore[attr-defined]
        write(
            f"{row['server']!s:<18} {row['test']!s:<34} {row['requests']!s:>3} "
            f"{row['prompt_tokens']!s:>7} {row['completion_tokens']!s:>6} "
            f"{row['largest_prompt']!s:>5}  {seconds}"
        )
    target = cache_dir() / "figures.json"
    target.write_text(json.dumps(FIGURES, indent=1))
    write(f"(kept in {target})")
