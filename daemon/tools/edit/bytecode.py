"""No check passes on the bytecode of a file as it was before the edit.

Python trusts a cached `__pycache__/NAME.*.pyc` whose recorded source mtime (in
whole seconds) and size match the source: an edit written within the same
second as the last compile, keeping the size (`a - b` to `a + b`), would be
tested as the old code. Before a check runs, the cached bytecode of every
Python file the turn changed is removed, and the check itself runs with
`PYTHONDONTWRITEBYTECODE=1` (checks.py), so what it compiles is never
trusted later. Only regular files inside a real `__pycache__` folder of the
workspace are removed; a symlink is left alone.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.workspace import Workspace

CACHE = "__pycache__"
NO_BYTECODE = {"PYTHONDONTWRITEBYTECODE": "1"}


def remove_stale_bytecode(root: Path, changed: Iterable[str]) -> list[str]:
    """Remove the cached bytecode of the `.py` files among `changed` (workspace-relative);
    the removed files, workspace-relative."""
    removed: list[str] = []
    workspace = Workspace(root)
    for rel in changed:
        pure = PurePosixPath(rel)
        if pure.suffix != ".py":
            continue
        folder = pure.parent / CACHE
        try:
            real = workspace.resolve(str(folder))
            info = os.lstat(real)
        except (ToolRefusal, OSError):
            continue
        if not stat.S_ISDIR(info.st_mode) or real != workspace.root / folder:
            continue  # a symlink on the way: not ours to clean
        removed += [f"{folder}/{name}" for name in _remove_cached(real, pure.stem)]
    return removed


def _remove_cached(cache: Path, stem: str) -> list[str]:
    """`stem.TAG.pyc` and `stem.TAG.opt-N.pyc` in `cache`, when regular files."""
    pattern = re.compile(re.escape(stem) + r"\.[\w-]+(?:\.opt-\d+)?\.pyc")
    removed: list[str] = []
    try:
        names = [entry.name for entry in cache.iterdir()]
    except OSError:
        return removed
    for name in names:
        if not pattern.fullmatch(name):
            continue
        path = cache / name
        try:
            if stat.S_ISREG(os.lstat(path).st_mode):
                path.unlink()
                removed.append(name)
        except OSError:
            continue
    return removed
