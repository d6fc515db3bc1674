"""A restarted daemon's hub answers from the index its last run stored, at once, while
its first refresh looks at the files behind it; a stored file it cannot use (damaged,
another version's) is not answered from: the index is built, as with none.

The first refresh is held at its walk (the walk waits for `go`), so what is answered
before it is the stored index alone."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from coding_harness.daemon.index import code_index
from coding_harness.daemon.index.hub import IndexHub
from coding_harness.daemon.index.persist import index_path
from coding_harness.daemon.index.session_map import session_map
from coding_harness.daemon.index.symbols import UNCHECKED, IndexSymbols
from tests.support.generated_repo import GeneratedRepo, generate_repo

HELD_SECONDS = 30.0  # the most a walk waits for `go`: a bound, never reached when all is well


@pytest.fixture
def repo(tmp_path: Path) -> GeneratedRepo:
    repo = generate_repo(tmp_path / "repo", 12, body_lines=4)

    async def first_run() -> None:  # the daemon before the restart: builds and stores
        hub = IndexHub(tmp_path / "state")
        await hub.built(repo.root)
        await hub.close()

    asyncio.run(first_run())
    return repo


@pytest.fixture
def go(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Holds every walk of the workspace until set."""
    event = threading.Event()
    walk = code_index.walk_workspace

    def held_walk(*args: Any, **kwargs: Any) -> Any:
        event.wait(HELD_SECONDS)
        return walk(*args, **kwargs)

    monkeypatch.setattr(code_index, "walk_workspace", held_walk)
    yield event
    event.set()


def test_the_stored_index_answers_before_the_first_refresh_ends(
    tmp_path: Path, repo: GeneratedRepo, go: threading.Event
) -> None:
    name = repo.popular[0]
    path, line = repo.definitions[name]
    python = next(p for p in repo.files if p.endswith(".py") and p != path)
    (repo.root / python).write_text("def added_while_down():\n    return 1\n")

    async def restarted() -> tuple[str, str, str, Any, dict[str, Any] | None, str, str]:
        hub = IndexHub(tmp_path / "state")
        symbols = IndexSymbols(hub, repo.root)
        try:
            hub.warm(repo.root)  # a session opened
            stored = await asyncio.wait_for(symbols.find(name), HELD_SECONDS)
            missing = await symbols.find("added_while_down")
            answer = await session_map(hub, repo.root, 512, [f"what does {name} do"])
            building = hub.entry_state(repo.root)
            go.set()
            await hub.built(repo.root)
            return (
                stored,
                missing,
                answer.state,
                answer.map,
                building,
                await symbols.find(name),
                await symbols.find("added_while_down"),
            )
        finally:
            go.set()
            await hub.close()

    stored, missing, state, found_map, building, fresh, added = asyncio.run(restarted())
    assert f"{path}:{line}:" in stored and stored.endswith(f"note: {UNCHECKED}")
    assert missing.startswith("no definition or use of 'added_while_down'")
    assert state == "ready" and f"{path}:" in found_map  # ranked on load: the map is there
    assert building is not None and building["state"] == "building"
    assert building["files"] == len(repo.files)
    # Once the first refresh has looked at the files: current, and said no more.
    assert f"{path}:{line}:" in fresh and UNCHECKED not in fresh
    assert f"{python}:1: function: def added_while_down():" in added


@pytest.mark.parametrize("damage", ["garbage", "another version"])
def test_a_stored_index_that_cannot_be_used_is_built_instead(
    tmp_path: Path, repo: GeneratedRepo, go: threading.Event, damage: str
) -> None:
    target = index_path(tmp_path / "state", repo.root)
    if damage == "garbage":
        target.write_bytes(b"this is not a database" * 100)
        for suffix in ("-wal", "-shm"):
            Path(f"{target}{suffix}").unlink(missing_ok=True)
    else:
        with sqlite3.connect(target) as db:
            db.execute("UPDATE meta SET value = 'format=0' WHERE key = 'tagger'")
    name = repo.popular[0]

    async def restarted() -> tuple[Any, str, Any]:
        hub = IndexHub(tmp_path / "state")
        try:
            before = await asyncio.wait_for(hub.current(repo.root), HELD_SECONDS)
            waiting = await IndexSymbols(hub, repo.root).find(name)
            go.set()
            built = await hub.built(repo.root)
            return before, waiting, built
        finally:
            go.set()
            await hub.close()

    before, waiting, built = asyncio.run(restarted())
    assert before is None and waiting.startswith("the code index is still being built")
    assert built.checked and sorted(built.files) == repo.files
    assert built.definitions(name)
