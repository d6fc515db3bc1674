"""The session's workspace: turning a path the model typed into a safe real path.

Every tool that touches the file system goes through `Workspace`. It resolves
symlinks first and then compares whole path components, so `../proj-evil`
next to `proj`, a symlink pointing out, or `sub/../../x` are all refused. It
also keeps the model away from hidden files (dotfiles, `~` backups, `#...#`
lock files), both as typed and after resolution.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePath

from coding_harness.daemon.tools.errors import ToolRefusal

MAX_PATH_BYTES = 4096
_EXAMPLE = "name files relative to the workspace root, e.g. 'src/app.py', or '.' for the root"


def is_hidden_name(name: str) -> bool:
    """Dotfiles, editor backups (`name~`) and lock files (`#name#`) are hidden."""
    if name in ("", ".", ".."):
        return False
    return (
        name.startswith(".")
        or name.endswith("~")
        or (len(name) > 1 and name.startswith("#") and name.endswith("#"))
    )


def check_not_hidden(rel: PurePath, shown: str | None = None) -> None:
    """Refuse if any component of the workspace-relative path is hidden."""
    for part in rel.parts:
        if is_hidden_name(part):
            label = shown if shown is not None else rel.as_posix()
            raise ToolRefusal(
                f"refused: '{label}' is a hidden file or lies inside a hidden folder "
                f"('{part}'). Dotfiles, '~' backups and '#...#' files are off limits."
            )


class Workspace:
    """The folder a session works in; `root` is its real path."""

    def __init__(self, root: Path) -> None:
        self.given_root = Path(os.path.normpath(Path(root).absolute()))
        self.root = Path(os.path.realpath(root))

    def relative(self, real: Path) -> str:
        """The workspace-relative form of a real path inside the workspace."""
        rel = real.relative_to(self.root).as_posix()
        return rel or "."

    def resolve(self, path: str) -> Path:
        """The real path inside the workspace that `path` names, or `ToolRefusal`."""
        typed = self._typed(path)
        real = Path(os.path.realpath(typed))
        if not self.contains(real):
            raise ToolRefusal(self._outside_message(path, typed))
        return real

    def resolve_visible(self, path: str) -> Path:
        """Like `resolve`, and also refuse hidden names, as typed and as resolved."""
        real = self.resolve(path)
        typed_rel = self._typed_relative(path)
        if typed_rel is not None:
            check_not_hidden(typed_rel, path)
        check_not_hidden(real.relative_to(self.root), path)
        return real

    def resolve_for_write(self, path: str) -> Path:
        """A path that may not exist yet; its existing ancestors must be folders."""
        real = self.resolve_visible(path)
        if real == self.root:
            raise ToolRefusal("refused: the workspace root is a folder, not a file to write")
        ancestor = real.parent
        while not ancestor.exists():
            ancestor = ancestor.parent
        if not ancestor.is_dir():
            raise ToolRefusal(
                f"refused: cannot create '{path}' because "
                f"'{self.relative(ancestor)}' is a file, not a folder"
            )
        return real

    def contains(self, real: Path) -> bool:
        """True when the real path is the root or lies below it, component-wise."""
        return real.is_relative_to(self.root)

    def _typed(self, path: str) -> Path:
        if "\x00" in path:
            raise ToolRefusal("invalid path: it contains a NUL byte")
        if len(path.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
            raise ToolRefusal(f"invalid path: it is longer than {MAX_PATH_BYTES} bytes")
        return self.root / (path.strip() or ".")

    def _typed_relative(self, path: str) -> PurePath | None:
        """The path as typed, relative to the root, when it can be read that way."""
        typed = PurePath(path.strip() or ".")
        if not typed.is_absolute():
            return typed
        for base in (self.root, self.given_root):
            if typed.is_relative_to(base):
                return typed.relative_to(base)
        return None

    def _outside_message(self, path: str, typed: Path) -> str:
        lexical = Path(os.path.normpath(typed))
        how = "resolves (through a symlink) to" if self.contains(lexical) else "is"
        return f"refused: '{path}' {how} a location outside the workspace; {_EXAMPLE}"
