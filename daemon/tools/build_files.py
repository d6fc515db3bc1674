"""No `make` runs build files that changed this turn unseen.

The build files are what decides what `make` runs: the makefiles and `.mk` files
of the workspace root, `pyproject.toml`, and the files the makefiles include
(`changes_check` tells whether an edit touches one: any `.mk` file counts). A
coding turn notes their bytes when it starts (`read_build_files`). An edit to one
through the edit tools is always put to the user with its diff, and what it wrote
becomes the noted text (`note_written`; a revert too). Before
`make check`, or a `make` through run_shell, runs, the files are read again: any
that differs from its noted text (a recipe or a formatter rewrote the Makefile,
a command dropped a new `.mk` the Makefile includes) is shown to the user with
its diff, under `-y` and in the accept-edits mode too, and `make` runs only on
yes. A yes notes the files as they are.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import re
from pathlib import Path, PurePosixPath

from coding_harness.daemon.agent.seams import ApprovalRequest
from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.files import read_regular
from coding_harness.daemon.tools.workspace import Workspace

MAKEFILE_NAMES = ("GNUmakefile", "makefile", "Makefile")
CHECK_INPUTS = frozenset({*MAKEFILE_NAMES, "pyproject.toml"})
_INCLUDE = re.compile(r"^\s*(?:-include|sinclude|include)\s+(.+)$", re.MULTILINE)
_READ_LIMIT = 1_000_000
_DIFF_CHARS = 20_000
BuildFiles = dict[str, bytes | None]


def changes_check(root: Path, rel: str) -> bool:
    """Whether an edit to `rel` (relative to `root`) changes what `make check` runs."""
    name = PurePosixPath(rel).name
    return name in CHECK_INPUTS or name.endswith(".mk") or rel in included_files(root)


def included_files(root: Path) -> set[str]:
    """The files the workspace's makefiles include (`include`, `-include`, `sinclude`;
    names with variables in them are not expanded), relative to the workspace."""
    found: set[str] = set()
    for name in MAKEFILE_NAMES:
        data = _read(root, name)
        if data is None:  # none, or not a regular file (a FIFO would block make too)
            continue
        for words in _INCLUDE.findall(data.decode("utf-8", "replace")):
            for word in words.split("#", 1)[0].split():
                if "$" not in word:
                    found.add(PurePosixPath(word).as_posix().removeprefix("./"))
    return found


def read_build_files(root: Path, also: tuple[str, ...] = ()) -> BuildFiles:
    """The build files' bytes (None: absent, unreadable, or outside the workspace),
    and those of `also`."""
    names = {*CHECK_INPUTS, *also, *included_files(root)}
    with contextlib.suppress(OSError):
        names.update(entry.name for entry in root.iterdir() if entry.name.endswith(".mk"))
    return {name: _read(root, name) for name in sorted(names)}


def _read(root: Path, rel: str) -> bytes | None:
    """A visible regular file inside the workspace, by the file tools' rules."""
    try:
        real = Workspace(root).resolve_visible(rel)
        data, _ = read_regular(real, rel, _READ_LIMIT)
    except (ToolRefusal, OSError):
        return None
    return data


def note_written(ctx: ToolContext, rel: str) -> None:
    """An edit the user saw with its diff (or its revert) was just written: if `rel` is a
    build file, what it holds now is what they saw."""
    noted = ctx.outcome.build_files
    if noted is not None and (rel in noted or changes_check(ctx.workspace.root, rel)):
        noted[rel] = _read(ctx.workspace.root, rel)


async def confirm_build_files(ctx: ToolContext, command: str) -> str | None:
    """None when `command` (a make) may run; else why it was not run, for the model."""
    noted = ctx.outcome.build_files
    if noted is None:
        return None
    current = await asyncio.to_thread(read_build_files, ctx.workspace.root, tuple(noted))
    changed = [rel for rel, data in current.items() if data != noted.get(rel)]
    if not changed:
        return None
    diff = _diffs(noted, current, changed)
    names = ", ".join(changed)
    summary = (
        f"run {command}: build files changed this turn without your approval: {names} "
        "(a command rewrote them); asked even with -y"
    )
    request = ApprovalRequest(kind="command", path=command, diff=diff, summary=summary)
    decision = await ctx.approver.ask(request)
    if decision.decision != "yes":
        reason = decision.reason.strip()
        return (
            f"{command} was not run: the user did not approve running it with build files "
            f"that changed this turn ({names})" + (f". Reason: {reason}" if reason else "")
        )
    ctx.outcome.build_files = {**noted, **current}
    return None


def _diffs(noted: BuildFiles, current: BuildFiles, changed: list[str]) -> str:
    pieces: list[str] = []
    for rel in changed:
        before = (noted.get(rel) or b"").decode("utf-8", "replace").splitlines(keepends=True)
        after = (current.get(rel) or b"").decode("utf-8", "replace").splitlines(keepends=True)
        pieces.extend(difflib.unified_diff(before, after, f"a/{rel}", f"b/{rel}"))
    text = "".join(pieces)
    if len(text) > _DIFF_CHARS:
        text = text[:_DIFF_CHARS] + "\n[the rest of the diff is not shown]\n"
    return text
