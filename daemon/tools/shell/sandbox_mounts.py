"""The sandbox's mounts: what a command sees of the file system, as bwrap options.

From the bottom up:

- the whole file system read-only, a fresh `/dev` and `/proc`, a private `/tmp`;
- covers: the user's home folder and `/root` become empty folders (a tmpfs
  each). When the workspace is the home folder or holds it, the home folder's
  top-level dotfiles are masked instead (the rest of it is the workspace);
- shown again, read-only: the toolchain folders of `protocol.sandbox_home`,
  the user's `agent.sandbox_home` folders, the daemon's interpreter, every PATH
  folder and the toolchain variables' folders (`_program_folders`), wherever a
  cover hid them;
- the workspace, read-write; inside it `.git` and the hooks folder read-only
  (`sandbox_workspace.py`);
- masks, empty and read-only: the credential names (`NEVER_SHOWN`, and the ones
  the walk of the workspace finds) and the daemon's own folders, wherever they
  would show (around a workspace inside one of them, a session's worktree in the
  state folder, every entry but the one on the way to it).

A mount lies on top of every mount of a folder around it: they are made
parents first, and for one path in the order of the list above. So the
workspace shows through a cover of the folder it is in, and a mask inside the
workspace holds over it.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from coding_harness.daemon.tools.shell.sandbox_workspace import inspect
from coding_harness.protocol.sandbox_home import NEVER_SHOWN, SHOWN_IN_HOME, entry_path

# Within one path, the order mounts are made in (later ones on top).
_RANK = {"system": 0, "cover": 0, "show": 1, "workspace": 2, "read_only": 3, "mask": 4}
_HIDING = ("cover", "mask")
# Variables tool commands get (process.py) that name toolchain folders, and the
# parts of each that hold programs (CARGO_HOME and GOPATH hold credentials too).
_TOOLCHAIN_VARIABLES: dict[str, tuple[str, ...]] = {
    "VIRTUAL_ENV": ("",), "CONDA_PREFIX": ("",), "PYTHONHOME": ("",),
    "GOROOT": ("",), "GOMODCACHE": ("",), "GOCACHE": ("",), "UV_CACHE_DIR": ("",),
    "RUSTUP_HOME": ("",), "NVM_DIR": ("",),
    "CARGO_HOME": ("bin", "registry", "git"), "GOPATH": ("pkg", "bin"),
}  # fmt: skip


@dataclass(frozen=True, kw_only=True, slots=True)
class View:
    """What a turn's sandbox shows and hides, apart from the workspace."""

    home: str  # the user's home folder
    shown: tuple[str, ...] = ()  # agent.sandbox_home entries, as written
    hidden: tuple[str, ...] = ()  # the daemon's folders: never shown


@dataclass(frozen=True, slots=True)
class _Mount:
    path: str
    kind: str
    source: str = ""  # a show's real folder, when `path` reaches it through a symlink

    @property
    def order(self) -> tuple[int, int]:
        depth = 0 if self.path == "/" else self.path.count("/")
        return depth, _RANK[self.kind]


class _Plan:
    def __init__(self, home: str, workspace: str) -> None:
        self.mounts: list[_Mount] = []
        # Never shown whole, and never masked whole (a folder around one of them
        # would show all of the home folder, or hide the workspace).
        self.roots = (home, "/root", "/tmp", workspace)

    def add(self, path: str, kind: str, source: str = "") -> None:
        self.mounts.append(_Mount(path, kind, source))

    def visible(self, path: str) -> bool:
        """Whether `path` shows through the mounts made so far."""
        around = [m for m in self.mounts if _within(path, m.path) and m.kind != "system"]
        return max(around, key=lambda m: m.order).kind not in _HIDING

    def show(self, path: str) -> None:
        """Show `path` read-only where a cover hides it, at its own path and, when
        that path goes through a symlink, at its real one too."""
        given = os.path.normpath(path)
        real = os.path.realpath(given)
        if not Path(real).is_dir() or self._around_a_root(given) or self._around_a_root(real):
            return
        for where in dict.fromkeys((given, real)):
            if not self.visible(where):
                self.add(where, "show", real)

    def mask(self, path: str) -> None:
        """Mask `path` where it shows (a symlink: what it leads to); a folder that holds
        the workspace (a session's worktree in the state folder) entry by entry around it."""
        real = os.path.realpath(path)
        if not os.path.lexists(real):
            return
        workspace = self.roots[-1]
        if real != workspace and _within(workspace, real) and not self._around_a_root(real, 3):
            for entry in sorted(Path(real).iterdir()):
                self.mask(str(entry))
        elif not self._around_a_root(real) and self.visible(real):
            self.add(real, "mask")

    def _around_a_root(self, path: str, roots: int = 4) -> bool:
        return any(_within(root, path) for root in self.roots[:roots])


def bwrap_arguments(workspace: str, view: View, network: bool) -> list[str]:
    """bwrap's options for a command in `workspace` (a real path) under `view`."""
    home = os.path.realpath(view.home)
    plan = _Plan(home, workspace)
    plan.add("/", "show", "/")
    plan.add("/dev", "system")
    plan.add("/proc", "system")
    plan.add("/tmp", "cover")
    plan.add(workspace, "workspace")
    _cover_home(plan, home, workspace)
    if Path("/root").is_dir() and home != "/root":
        plan.add("/root", "cover")
    found = inspect(workspace, f"{home}/.gitconfig")
    for path in found.read_only:
        plan.add(path, "read_only")
    wanted = [_join(home, entry) for entry in SHOWN_IN_HOME]
    wanted += [p for p in (entry_path(e, home) for e in view.shown) if p is not None]
    wanted += [*_program_folders(), *found.git_elsewhere]
    for path in sorted(wanted, key=lambda p: os.path.normpath(p).count("/")):
        plan.show(path)
    masked = [_join(home, name) for name in NEVER_SHOWN]
    for path in [*masked, *view.hidden, *found.masked]:
        plan.mask(path)
    return _arguments(plan, workspace, network)


def _cover_home(plan: _Plan, home: str, workspace: str) -> None:
    """An empty home folder; its dotfiles masked when the workspace holds it."""
    if not Path(home).is_dir():
        return
    if not (home == "/" or _within(home, workspace)):
        plan.add(home, "cover")
        return
    try:
        names = sorted(entry.name for entry in Path(home).iterdir())
    except OSError:
        return
    for name in names:
        if name.startswith(".") and name != ".git":
            real = os.path.realpath(_join(home, name))
            if real.startswith(home.rstrip("/") + "/") and Path(real).exists():
                plan.add(real, "mask")  # a symlink leading out is not the home's to mask


def _program_folders() -> list[str]:
    """The daemon's interpreter, every PATH folder and the folders the toolchain
    variables name: what commands run, wherever a cover would hide it."""
    found = [sys.prefix, sys.base_prefix, str(Path(sys.executable).resolve().parent)]
    found += os.environ.get("PATH", "").split(os.pathsep)
    for name, parts in _TOOLCHAIN_VARIABLES.items():
        value = os.environ.get(name, "")
        if value.startswith("/"):
            found += [_join(value, part) for part in parts]
    return [folder for folder in found if folder.startswith("/")]


def _arguments(plan: _Plan, workspace: str, network: bool) -> list[str]:
    args: list[str] = []
    read_only_after: list[str] = []
    for mount in sorted(plan.mounts, key=lambda m: m.order):
        args += _options(mount)
        if mount.kind == "mask" and Path(mount.path).is_dir():
            read_only_after.append(mount.path)  # once what is shown inside is mounted
    for path in read_only_after:
        args += ["--remount-ro", path]
    args += ["--chdir", workspace]
    args += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not network:
        args.append("--unshare-net")
    args += ["--die-with-parent", "--new-session", "--cap-drop", "ALL", "--"]
    return args


def _options(mount: _Mount) -> list[str]:
    path = mount.path
    if mount.kind == "system":
        return ["--dev" if path == "/dev" else "--proc", path]
    if mount.kind == "cover":
        return ["--tmpfs", path]
    if mount.kind == "show":
        return ["--ro-bind", mount.source, path]
    if mount.kind == "workspace":
        return ["--bind", path, path]
    if mount.kind == "read_only":
        return ["--ro-bind", path, path]
    if Path(path).is_dir():  # a mask
        return ["--tmpfs", path]
    return ["--ro-bind", "/dev/null", path]


def _join(folder: str, name: str) -> str:
    return os.path.normpath(f"{folder}/{name}") if name else folder


def _within(path: str, folder: str) -> bool:
    return folder == "/" or path == folder or path.startswith(folder + "/")
