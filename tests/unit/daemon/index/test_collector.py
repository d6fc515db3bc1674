"""The index's bulk stays out of the garbage collector's view.

An index holds one record per definition and one entry per defined name:
hundreds of thousands in a large workspace. Had each been an object the
collector tracks (a record, a named tuple, a list), every full collection would
walk them all with the interpreter lock held, and the daemon's event loop would
stall for it (50-200 ms each time; bench/daemon_stall.py). A plain tuple of
strings and ints is untracked after the first collection that sees it.
"""

from __future__ import annotations

import gc
from pathlib import Path

from coding_harness.daemon.index.code_index import CodeIndex


def test_definitions_and_definers_are_not_tracked_by_the_collector(tmp_path: Path) -> None:
    for n in range(3):
        lines = [f"def f{n}_{i}(a):\n    return shared(a)\n" for i in range(50)]
        (tmp_path / f"m{n}.py").write_text("".join(lines) + "def shared(a):\n    return a\n")
    index = CodeIndex(tmp_path)
    index.refresh()
    gc.collect()
    assert len(index.defined) == 151
    rows = [row for entry in index.files.values() for row in entry.tags.rows]
    assert len(rows) == 153
    assert not any(gc.is_tracked(row) for row in rows)
    assert index.definitions("shared")[0].definition.kind == "function"  # read as records
    assert sorted(index.defined["shared"]) == ["m0.py", "m1.py", "m2.py"]  # in parse order
    assert not any(gc.is_tracked(paths) for paths in index.defined.values())


def test_a_file_going_leaves_its_names_with_the_others(tmp_path: Path) -> None:
    for n in range(2):
        (tmp_path / f"m{n}.py").write_text("def shared():\n    return 1\n")
    index = CodeIndex(tmp_path)
    index.refresh()
    (tmp_path / "m0.py").unlink()
    index.refresh()
    assert index.defined["shared"] == ("m1.py",)
    (tmp_path / "m1.py").unlink()
    index.refresh()
    assert "shared" not in index.defined
