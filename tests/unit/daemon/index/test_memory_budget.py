"""The code indexes' memory budget: a workspace whose tags pass it is indexed in
part, nearest its root first, and says so (the map, find_symbol, the hub's state);
the budget is shared across workspaces and given back when files go."""

from __future__ import annotations

import asyncio
from pathlib import Path

from coding_harness.daemon.index.budget import FILE_BYTES, LEFT_OUT, MemoryBudget, tags_bytes
from coding_harness.daemon.index.code_index import CodeIndex
from coding_harness.daemon.index.hub import IndexHub
from coding_harness.daemon.index.persist import IndexFile, index_path
from coding_harness.daemon.index.repo_map import repo_map
from coding_harness.daemon.index.symbols import describe
from coding_harness.daemon.index.tags import FileTags

DEFINITIONS = 50  # per generated file


def write_module(path: Path, stem: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"def {stem}_{i}():\n    return {i}\n" for i in range(DEFINITIONS)))


def one_file_bytes(tmp_path: Path) -> int:
    """What one generated module's tags cost, measured on a real one."""
    probe = tmp_path / "probe"
    write_module(probe / "m.py", "probe")
    index = CodeIndex(probe)
    index.refresh()
    return tags_bytes(index.files["m.py"].tags)


def deep_workspace(root: Path) -> None:
    write_module(root / "top_a.py", "top_a")
    write_module(root / "top_b.py", "top_b")
    for n in range(6):
        write_module(root / "pkg" / "deeper" / f"low_{n}.py", f"low_{n}")


def test_a_workspace_over_its_budget_is_indexed_in_part_nearest_the_root(tmp_path: Path) -> None:
    size = one_file_bytes(tmp_path)
    root = tmp_path / "ws"
    deep_workspace(root)
    index = CodeIndex(root, budget=MemoryBudget(workspace_bytes=size * 3, total_bytes=2**30))
    report = index.refresh()
    assert report.left_out == 5 and len(index.files) == 8
    assert index.definitions("top_a_1") and index.definitions("top_b_1")
    assert [p for p in sorted(index.files) if p not in index.left_out] == [
        "pkg/deeper/low_0.py",
        "top_a.py",
        "top_b.py",
    ]
    assert index.files["pkg/deeper/low_5.py"].tags.skipped == LEFT_OUT
    assert index.budget.held(root) <= size * 3
    notice = index.notice()
    assert notice is not None and "holds the tags of 3 of 8 source files" in notice
    assert f"({notice})" in repo_map(index, 1024).splitlines()[1]
    assert describe(index, "low_4_1").endswith(f"note: {notice}")
    assert index.refresh().parsed == 0  # the files left out are not parsed at every refresh


def test_files_going_give_their_room_back(tmp_path: Path) -> None:
    size = one_file_bytes(tmp_path)
    root = tmp_path / "ws"
    deep_workspace(root)
    index = CodeIndex(root, budget=MemoryBudget(workspace_bytes=size * 3, total_bytes=2**30))
    index.refresh()
    (root / "top_a.py").unlink()
    (root / "top_b.py").unlink()
    write_module(root / "pkg" / "deeper" / "low_5.py", "again")  # changed: tried again
    index.refresh()
    assert index.definitions("again_1") and not index.definitions("top_a_1")
    assert index.budget.held(root) <= size * 3


def test_the_budget_is_shared_across_workspaces(tmp_path: Path) -> None:
    size = one_file_bytes(tmp_path)
    shared = MemoryBudget(workspace_bytes=size * 10, total_bytes=size * 10)
    first, second = tmp_path / "first", tmp_path / "second"
    deep_workspace(first)
    deep_workspace(second)
    CodeIndex(first, budget=shared).refresh()
    index = CodeIndex(second, budget=shared)
    assert index.refresh().left_out == 6
    assert shared.held() <= size * 10


def test_stored_rows_are_granted_on_load_as_well(tmp_path: Path) -> None:
    size = one_file_bytes(tmp_path)
    root, state = tmp_path / "ws", tmp_path / "state"
    deep_workspace(root)
    CodeIndex(root, IndexFile(index_path(state, root), root)).refresh()
    small = MemoryBudget(workspace_bytes=size * 2, total_bytes=2**30)
    loaded = CodeIndex(root, IndexFile(index_path(state, root), root), small)
    assert loaded.refresh().parsed == 0
    assert sorted(set(loaded.files) - loaded.left_out) == ["top_a.py", "top_b.py"]
    assert loaded.notice() is not None


def test_the_hub_drops_idle_indexes_to_make_room(tmp_path: Path) -> None:
    size = one_file_bytes(tmp_path)
    first, second = tmp_path / "first", tmp_path / "second"
    deep_workspace(first)
    deep_workspace(second)
    hub = IndexHub(None, budget=MemoryBudget(workspace_bytes=size * 9, total_bytes=size * 9))

    async def scenario() -> None:
        await hub.built(first.resolve())
        await hub.built(second.resolve())
        await hub.close()

    asyncio.run(scenario())
    assert hub.index_of(first.resolve()) is None  # dropped: its file would load it warm
    index = hub.index_of(second.resolve())
    assert index is not None and not index.left_out
    state = hub.entry_state(second.resolve())
    assert state is not None and state["notice"] is None


def test_an_estimate_counts_what_a_file_holds() -> None:
    assert tags_bytes(FileTags()) == FILE_BYTES
    assert tags_bytes(FileTags(references={"a": 1})) > FILE_BYTES
