"""What the sandbox keeps from a command inside its own workspace.

The workspace is read-write inside the sandbox, except:

- git's own folder, read-only: the workspace's `.git` (a folder, or a
  worktree's `.git` file), every nested `.git` the walk below finds, and the
  hooks folder `core.hooksPath` names when it lies in the workspace (husky's
  `.husky`). A recipe that could write there would have the user's next `git
  status` or commit run its code outside the sandbox (`core.fsmonitor`, hooks).
  The gitdir a `.git` file points to is returned too, to be shown read-only
  where the home folder's cover would hide it.
- credential names (`protocol.sandbox_home.workspace_masked`: `.ssh`,
  `.aws`, `.netrc`, ...), masked. The walk that finds them is bounded: the
  workspace's top and `WALK_DEPTH` levels of folders below it, at most
  `WALK_FOLDERS` folders, never following a symlink or entering `.git` or
  `node_modules`. A credential name deeper than that, or behind a symlink, is
  not masked (a symlink leads out of the workspace, where the home folder's
  cover applies).

Every path returned is a real path without symlinks, so no mount can be led
outside the workspace by a name the repository chose.
"""

from __future__ import annotations

import os
import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from coding_harness.protocol.sandbox_home import workspace_masked

WALK_DEPTH = 3
WALK_FOLDERS = 1000
_NOT_ENTERED = frozenset({".git", "node_modules"})
_HOOKS_PATH = re.compile(r"^\s*hookspath\s*=\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)


@dataclass(kw_only=True, slots=True)
class Findings:
    """Paths inside the workspace to keep read-only or to mask, and git folders
    outside it the workspace's `.git` file points to."""

    read_only: list[str] = field(default_factory=list)
    masked: list[str] = field(default_factory=list)
    git_elsewhere: list[str] = field(default_factory=list)


def inspect(workspace: str, gitconfig: str | None = None) -> Findings:
    """What to protect inside `workspace` (a real path); `gitconfig`: the user's
    global git config, which may set `core.hooksPath` too."""
    found = Findings()
    _walk(workspace, found)
    top_git = Path(workspace, ".git")
    configs = [Path(gitconfig)] if gitconfig else []
    if top_git.is_file() and not top_git.is_symlink():
        found.git_elsewhere = _gitdirs(top_git)
        configs += [Path(folder, "config") for folder in found.git_elsewhere]
    else:
        configs.append(top_git / "config")
    for hooks in _hooks_paths(configs, workspace):
        if hooks not in found.read_only:
            found.read_only.append(hooks)
    return found


def _walk(workspace: str, found: Findings) -> None:
    names = workspace_masked()
    first = {name.split("/", 1)[0] for name in names}
    queue = deque([(workspace, 0)])
    visited = 0
    while queue and visited < WALK_FOLDERS:
        folder, depth = queue.popleft()
        visited += 1
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink():
                continue
            if entry.name == ".git":
                found.read_only.append(entry.path)
            if entry.name in first:
                found.masked += _present(folder, entry.name, names)
            elif depth < WALK_DEPTH and entry.name not in _NOT_ENTERED and entry.is_dir():
                queue.append((entry.path, depth + 1))


def _present(folder: str, head: str, names: tuple[str, ...]) -> list[str]:
    """The credential paths starting with `head` that exist in `folder`, through no
    symlink."""
    present = []
    for name in names:
        if name.split("/", 1)[0] != head:
            continue
        path = f"{folder.rstrip('/')}/{name}"
        if os.path.lexists(path) and os.path.realpath(path) == path:
            present.append(path)
    return present


def _gitdirs(git_file: Path) -> list[str]:
    """The gitdir a worktree's or submodule's `.git` file names, and its common
    folder (the main repository's `.git`, which holds the config and hooks)."""
    try:
        with git_file.open(encoding="utf-8") as handle:
            line = handle.readline().strip()
    except (OSError, UnicodeDecodeError):
        return []
    if not line.startswith("gitdir:"):
        return []
    gitdir = os.path.realpath(git_file.parent / line.removeprefix("gitdir:").strip())
    found = [gitdir]
    try:
        with Path(gitdir, "commondir").open(encoding="utf-8") as handle:
            common = handle.readline().strip()
    except (OSError, UnicodeDecodeError):
        return found
    if common:
        found.append(os.path.realpath(Path(gitdir, common)))
    return found


def _hooks_paths(configs: list[Path], workspace: str) -> list[str]:
    """The `core.hooksPath` folders those git configs name that lie in the workspace
    (a relative one is relative to the workspace, as git runs hooks there)."""
    found = []
    for config in configs:
        try:
            with config.open(encoding="utf-8", errors="replace") as handle:
                text = handle.read(1 << 20)
        except OSError:
            continue
        for match in _HOOKS_PATH.finditer(text):
            value = Path(match.group(1).strip('"')).expanduser()
            real = os.path.realpath(Path(workspace, value))
            if real.startswith(workspace.rstrip("/") + "/") and Path(real).is_dir():
                found.append(real)
    return found
