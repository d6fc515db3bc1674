"""The index's bulk stays out of the garbage collector's view.

An index holds one entry per defined name: hundreds of thousands in a large
workspace. Had each been a list (which the collector tracks), every full
collection would walk them all with the interpreter lock held, and the daemon's
event loop would stall for it (bench/daemon_stall.py). A plain tuple of strings
is untracked after the first collection that sees it.
"""

from __future__ import annotations

import gc
from pathlib import Path

from coding_harness.daemon.index.code_index import CodeIndex


def test_the_definers_of_each_name_are_not_tracked_by_the_collector(tmp_path: Path) -> None:
    for n in range(3):
        lines = [f"def f{n}_{i}(a):\n    return shared(a)\n" for i in range(50)]
        (tmp_path / f"m{n}.py").write_text("".join(lines) + "def shared(a):\n    return a\n")
    index = CodeIndex(tmp_path)
    index.refresh()
    gc.collect()
    assert len(index.defined) == 151
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
