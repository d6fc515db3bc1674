"""No `make` runs build files that changed this turn unseen.

The build files are what decides what `make` (and `uv run`, `uv sync`) runs: the
makefiles and `.mk` files of the workspace root, `pyproject.toml`, and the files
the makefiles include, and those include, globs expanded (`changes_check` tells
whether an edit touches one: any `.mk` file counts). A coding turn notes what they
hold when it starts (`read_build_files`; a hidden one by digest, never shown). An
edit to one through the edit tools is always put to the user with its diff, and
what it wrote becomes the noted text (`note_written`; a revert too). Before
`make check`, or a `make`, `uv run` or `uv sync` through run_shell, the files are
read again: any that differs from what was noted (a recipe or a formatter rewrote
the Makefile, a command dropped a new `.mk` the Makefile includes) is shown to the
user with its diff, under `-y` and in the accept-edits mode too, and the command
runs only on yes. A yes notes the files as they are.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import hashlib
import os
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
MAX_INCLUDES = 200
HIDDEN = b"hidden file, sha256 "  # how a hidden build file's content is noted
_DIFF_CHARS = 20_000
BuildFiles = dict[str, bytes | None]


def changes_check(root: Path, rel: str) -> bool:
    """Whether an edit to `rel` (relative to `root`) changes what `make check` runs."""
    name = PurePosixPath(rel).name
    return name in CHECK_INPUTS or name.endswith(".mk") or rel in included_files(root)


def included_files(root: Path) -> set[str]:
    """The files the workspace's makefiles include (`include`, `-include`, `sinclude`),
    and those they include in turn, relative to the workspace: globs are expanded as
    make does, names with variables in them are not."""
    found: set[str] = set()
    pending = list(MAKEFILE_NAMES)
    while pending and len(found) < MAX_INCLUDES:
        data = _read(root, pending.pop())
        if data is None:  # none, or not a regular file (a FIFO would block make too)
            continue
        for words in _INCLUDE.findall(data.decode("utf-8", "replace")):
            for word in words.split("#", 1)[0].split():
                for rel in _expand(root, word):
                    if rel not in found:
                        found.add(rel)
                        pending.append(rel)
    return found


def _expand(root: Path, word: str) -> list[str]:
    if "$" in word:
        return []
    rel = PurePosixPath(word).as_posix().removeprefix("./")
    if not any(char in rel for char in "*?["):
        return [rel]
    try:
        matches = sorted(root.glob(rel))[:MAX_INCLUDES]
    except (ValueError, NotImplementedError, OSError):  # an absolute or odd pattern
        return []
    return [m.relative_to(root).as_posix() for m in matches if m.is_relative_to(root)]


def read_build_files(root: Path, also: tuple[str, ...] = ()) -> BuildFiles:
    """What each build file holds (None: absent, unreadable, or outside the workspace),
    and each of `also`."""
    names = {*CHECK_INPUTS, *also, *included_files(root)}
    with contextlib.suppress(OSError):
        names.update(entry.name for entry in root.iterdir() if entry.name.endswith(".mk"))
    return {name: _look(root, name) for name in sorted(names)}


def _read(root: Path, rel: str) -> bytes | None:
    """A visible regular file inside the workspace, by the file tools' rules."""
    if not os.path.lexists(root / rel):  # most names looked for are absent: no more work
        return None
    try:
        real = Workspace(root).resolve_visible(rel)
        data, _ = read_regular(real, rel, _READ_LIMIT)
    except (ToolRefusal, OSError):
        return None
    return data


def _look(root: Path, rel: str) -> bytes | None:
    """What a build file holds, to compare: its bytes (its size too, when it is longer
    than what is read), or for a hidden file inside the workspace (`-include .env`) a
    digest only, never shown."""
    if not os.path.lexists(root / rel):
        return None
    workspace = Workspace(root)
    try:
        real = workspace.resolve_visible(rel)
    except ToolRefusal:
        return _hidden_digest(workspace, rel)
    try:
        data, size = read_regular(real, rel, _READ_LIMIT)
    except (ToolRefusal, OSError):
        return None
    return data if size <= len(data) else data + f"\0[{size} bytes]".encode()


def _hidden_digest(workspace: Workspace, rel: str) -> bytes | None:
    real = (workspace.root / rel).resolve()
    if not workspace.contains(real):
        return None
    try:  # read_regular: a FIFO would block, and a huge file is hashed with its size
        data, size = read_regular(real, rel, _READ_LIMIT)
    except (ToolRefusal, OSError):
        return None
    return HIDDEN + hashlib.sha256(data).hexdigest().encode() + f" {size}".encode()


def note_written(ctx: ToolContext, rel: str) -> None:
    """An edit the user saw with its diff (or its revert) was just written: if `rel` is a
    build file, what it holds now is what they saw."""
    noted = ctx.outcome.build_files
    root = ctx.workspace.root
    if noted is None or not (rel in noted or changes_check(root, rel)):
        return
    noted[rel] = _look(root, rel)
    for name, held in read_build_files(root).items():  # what a new include names
        noted.setdefault(name, held)


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
        if any((side.get(rel) or b"").startswith(HIDDEN) for side in (noted, current)):
            pieces.append(f"{rel}: a hidden file; its content is not shown\n")
            continue
        before = (noted.get(rel) or b"").decode("utf-8", "replace").splitlines(keepends=True)
        after = (current.get(rel) or b"").decode("utf-8", "replace").splitlines(keepends=True)
        pieces.extend(difflib.unified_diff(before, after, f"a/{rel}", f"b/{rel}"))
    text = "".join(pieces)
    if len(text) > _DIFF_CHARS:
        text = text[:_DIFF_CHARS] + "\n[the rest of the diff is not shown]\n"
    return text
