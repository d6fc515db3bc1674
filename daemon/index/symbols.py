"""`find_symbol`'s answer: where a name is defined and which files use it.

Definitions come from the index (path:line, kind and signature). References are
the files whose tags use the name, most uses first; for the first few of them
the lines are found by reading the file and looking for the name as a whole word,
so the model can go straight there. Everything is capped. An index over its memory
budget is partial: the answer's last line says so. After a daemon's restart the
index stored by its last run answers at once, while the files are looked at behind
it: until that first refresh ends, a line says the files changed since may be
missing. While the workspace's first build runs (no stored index to answer from),
the answer says so with its progress and points to grep.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from coding_harness.daemon.index.beneath import read_beneath
from coding_harness.daemon.index.code_index import CodeIndex
from coding_harness.daemon.index.hub import FAILED, IndexHub
from coding_harness.daemon.index.session_map import REFRESH_WAIT
from coding_harness.daemon.index.tags import MAX_FILE_BYTES
from coding_harness.daemon.tools.errors import ToolRefusal

MAX_DEFINITIONS = 20
MAX_REFERENCE_FILES = 30
LINES_FOR_FILES = 8  # reference files whose lines are shown
LINES_PER_FILE = 5
_LINE_CHARS = 200
_NAME = re.compile(r"[A-Za-z_$][\w$]{0,199}")
UNCHECKED = (
    "the code index is as the daemon's last run stored it: files changed since are "
    "being indexed behind this answer (grep sees them now)"
)


class IndexSymbols:
    """The `SymbolLookup` of one session's workspace."""

    def __init__(self, hub: IndexHub, root: Path) -> None:
        self._hub = hub
        self._root = root

    async def find(self, name: str) -> str:
        name = name.strip()
        if not _NAME.fullmatch(name):
            raise ToolRefusal(
                f"{name[:80]!r} is not a name: give one identifier, without dots, "
                "spaces or arguments (for 'pkg.Class.method' ask for 'method')"
            )
        try:
            index = await asyncio.wait_for(self._hub.current(self._root), REFRESH_WAIT)
        except TimeoutError:  # a big refresh runs: answer from the index as it was
            index = self._hub.index_of(self._root)
        if index is None:
            state = self._hub.entry_state(self._root) or {}
            if state.get("state") == FAILED:
                return f"{state.get('error')}; use grep"
            return (
                f"the code index is still being built ({state.get('done', 0)} of "
                f"{state.get('total', 0)} files parsed); use grep meanwhile"
            )
        return await asyncio.to_thread(describe, index, name)


def describe(index: CodeIndex, name: str) -> str:
    """The answer, with a last line saying so when the index is partial or not yet
    checked against the files (loaded from its file, its first refresh running)."""
    notes = [index.notice(), None if index.checked else UNCHECKED]
    return "\n".join([_describe(index, name), *(f"note: {n}" for n in notes if n)])


def _describe(index: CodeIndex, name: str) -> str:
    definitions = index.definitions(name)
    users = index.referencing(name)
    if not definitions and not users:
        return (
            f"no definition or use of {name!r} in the code index "
            f"({len(index.files)} source files); grep finds it in other files or text"
        )
    out = [f"definitions of {name!r}:" if definitions else f"no definition of {name!r} found"]
    for found in definitions[:MAX_DEFINITIONS]:
        d = found.definition
        out.append(f"  {found.path}:{d.line}: {d.kind}: {d.signature}")
    if len(definitions) > MAX_DEFINITIONS:
        out.append(f"  [{len(definitions) - MAX_DEFINITIONS} more definitions not shown]")
    if users:
        out.append(f"used in {len(users)} files:")
        pattern = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
        for rank, (path, count) in enumerate(users[:MAX_REFERENCE_FILES]):
            out.append(f"  {path} ({count} {'use' if count == 1 else 'uses'})")
            if rank < LINES_FOR_FILES:
                out.extend(_lines(index.root, path, pattern))
        if len(users) > MAX_REFERENCE_FILES:
            out.append(f"  [{len(users) - MAX_REFERENCE_FILES} more files not shown]")
    return "\n".join(out)


def _lines(root: Path, path: str, pattern: re.Pattern[str]) -> list[str]:
    """The first lines of `path` naming the symbol; none if it now leads somewhere else
    (a symlink anywhere on its way: `read_beneath`)."""
    try:
        data = read_beneath(root, path, MAX_FILE_BYTES)
    except OSError:
        return []
    found = []
    for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        if pattern.search(line):
            text = line.strip()[:_LINE_CHARS]
            found.append(f"    {number}: {text}")
            if len(found) >= LINES_PER_FILE:
                break
    return found
