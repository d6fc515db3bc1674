"""The workspace walk: every visible, not ignored regular file under a root, from stat alone.

What the file tools may not show is never listed: hidden names (`is_hidden_name`:
dotfiles, `~` backups, `#...#`) and all below them; symlinks are neither followed nor
listed; only regular files are. Ignore files are honoured at every level, as git does
(matched with `pathspec.GitIgnoreSpec`): a nested file's patterns are relative to its
own folder, a deeper file overrides a shallower one, within a file the last matching
rule wins (`!` re-includes), `.git/info/exclude` ranks below every `.gitignore`, and an
ignored folder is not entered, so nothing below it can be re-included. The grep
fallback also passes `.rgignore` and `.ignore`, which rank above `.gitignore` as in
ripgrep. Unreadable folders are skipped. No file's contents are read but ignore files.

A repository is hostile, and a gitignore glob becomes a backtracking regular expression
that holds the interpreter while it runs: a rule with more than `MAX_STAR_RUNS` runs of
`*` (`*a*a*a*b` takes seconds per long name) is not used, ignore files are read up to
`MAX_IGNORE_BYTES`, and paths longer than `MAX_PATH_CHARS` are not walked.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pathspec

from coding_harness.daemon.tools.workspace import is_hidden_name

MAX_FILES = 100_000
MAX_IGNORE_BYTES = 1_000_000
MAX_STAR_RUNS = 2  # a leading `**/` not counted
MAX_PATH_CHARS = 1_024
GIT_IGNORE = ".gitignore"
RIPGREP_IGNORES = (".rgignore", ".ignore", GIT_IGNORE)  # highest precedence first
_STAR_RUN = re.compile(r"\*+")
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass(kw_only=True, slots=True, frozen=True)
class SourceFile:
    path: str  # workspace-relative, '/'-separated
    size: int
    mtime_ns: int


@dataclass(kw_only=True, slots=True, frozen=True)
class Walk:
    files: list[SourceFile]  # sorted by path
    capped: bool  # the walk stopped at `max_files`; later files are missing


@dataclass(kw_only=True, slots=True, frozen=True)
class _Layer:
    """The rules of one ignore file."""

    rank: int  # the precedence of its kind: 0 first
    depth: int  # how deep its folder lies: deeper first within a kind
    prefix: str  # its folder, workspace-relative with a trailing '/', '' at the root
    rules: tuple[tuple[re.Pattern[str], bool], ...]  # (regex, ignores), last rule first
    quick: re.Pattern[str]  # matches what any rule matches: most paths need no more


_Layers = tuple[_Layer, ...]  # in precedence order: the first one that matches decides


def walk_workspace(
    root: Path,
    *,
    max_files: int = MAX_FILES,
    ignore_names: Sequence[str] = (GIT_IGNORE,),
    under: str = "",
) -> Walk:
    """The regular files under `root` that are neither hidden nor ignored.

    `ignore_names`: the ignore files read in every folder, highest precedence first.
    `under`: walk only this folder ('' or workspace-relative ending in '/'), named
    explicitly, so searched even if ignored; the ignore files above it still apply.
    """
    base = os.fspath(root)
    files: list[SourceFile] = []
    pending: list[tuple[str, _Layers]] = [(under, _layers_above(base, under, ignore_names))]
    while pending:
        prefix, inherited = pending.pop()
        layers = _with_folder(inherited, base, prefix, ignore_names)
        folders = _scan(base, prefix, layers, files, max_files + 1)
        if len(files) > max_files:
            del files[max_files:]
            files.sort(key=_by_path)
            return Walk(files=files, capped=True)
        pending.extend((folder, layers) for folder in reversed(folders))
    files.sort(key=_by_path)
    return Walk(files=files, capped=False)


def _by_path(file: SourceFile) -> str:
    return file.path


def _scan(
    base: str, prefix: str, layers: _Layers, files: list[SourceFile], limit: int
) -> list[str]:
    """Add the folder's kept files to `files` (up to `limit`); its kept folders, sorted."""
    try:
        with os.scandir(f"{base}/{prefix}") as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
    except OSError:  # unreadable, or gone meanwhile
        return []
    folders = []
    for entry in entries:
        name = entry.name
        rel = prefix + name
        if is_hidden_name(name) or len(rel) > MAX_PATH_CHARS:
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                if not ignored(layers, rel + "/"):
                    folders.append(rel + "/")
            elif entry.is_file(follow_symlinks=False) and not ignored(layers, rel):
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(info.st_mode):
                    files.append(SourceFile(path=rel, size=info.st_size, mtime_ns=info.st_mtime_ns))
                    if len(files) >= limit:
                        break
        except OSError:  # gone since the listing
            continue
    return folders


def ignored(layers: _Layers, rel: str) -> bool:
    """Whether the rules ignore `rel` (a folder ends with '/')."""
    for layer in layers:  # each lies in a folder above `rel`
        sub = rel[len(layer.prefix) :]
        if layer.quick.search(sub):
            for regex, ignores in layer.rules:
                if regex.search(sub):
                    return ignores
    return False


class IgnoreCheck:
    """Answers "is this file ignored?" for scattered paths (the symlinks grep names),
    reading each folder's ignore files once."""

    def __init__(
        self, root: Path, ignore_names: Sequence[str] = (GIT_IGNORE,), under: str = ""
    ) -> None:
        """`under`: the folder a search was started in ('' or ending in '/'): named
        explicitly, it and the folders above it are not left out."""
        self._base = os.fspath(root)
        self._names = tuple(ignore_names)
        self._under = under
        top = _exclude_layers(self._base, len(self._names))
        self._folders: dict[str, _Layers | None] = {
            "": _with_folder(top, self._base, "", self._names)
        }

    def ignored(self, rel: str) -> bool:
        """Whether the walk would leave out the file `rel` (or something above it)."""
        folder = rel.rpartition("/")[0]
        layers = self._layers(folder + "/" if folder else "")
        return layers is None or ignored(layers, rel)

    def _layers(self, prefix: str) -> _Layers | None:
        """The rules for the entries of folder `prefix`; None when it is left out."""
        if prefix in self._folders:
            return self._folders[prefix]
        parent, _, name = prefix[:-1].rpartition("/")
        above = self._layers(parent + "/" if parent else "")
        layers = None
        named = self._under.startswith(prefix)
        if above is not None and (named or not (is_hidden_name(name) or ignored(above, prefix))):
            layers = _with_folder(above, self._base, prefix, self._names)
        self._folders[prefix] = layers
        return layers


def _layers_above(base: str, under: str, names: Sequence[str]) -> _Layers:
    """The rules of the ignore files in the folders above `under`."""
    layers = _exclude_layers(base, len(names))
    prefix = ""
    for part in under.split("/")[:-1]:
        layers = _with_folder(layers, base, prefix, names)
        prefix += part + "/"
    return layers


def _with_folder(inherited: _Layers, base: str, prefix: str, names: Sequence[str]) -> _Layers:
    depth = prefix.count("/")
    added = []
    for rank, name in enumerate(names):
        lines = _read_rules(f"{base}/{prefix}{name}")
        if lines:
            added.append(_layer(lines, rank=rank, depth=depth, prefix=prefix))
    if not added:
        return inherited
    return tuple(sorted((*inherited, *added), key=lambda layer: (layer.rank, -layer.depth)))


def _exclude_layers(base: str, rank: int) -> _Layers:
    lines = _read_rules(f"{base}/.git/info/exclude")
    return (_layer(lines, rank=rank, depth=0, prefix=""),) if lines else ()


def _layer(lines: list[str], *, rank: int, depth: int, prefix: str) -> _Layer:
    """pathspec's regular expressions for the rules, made to match a path itself only:
    its `(?P<ps_d>/)` also matches what lies below a folder, which the walk never sees
    (it does not enter an ignored folder) but a search started inside one does."""
    spec = pathspec.GitIgnoreSpec.from_lines(lines)
    rules = [
        (rule.regex.pattern.replace("(?P<ps_d>/)", "/$"), rule.regex.flags, rule.include)
        for rule in spec.patterns
        if rule.include is not None and rule.regex is not None
    ]
    compiled = tuple((re.compile(text, flags), bool(ignores)) for text, flags, ignores in rules)
    joined = "|".join(f"(?:{text})" for text, _, _ in rules)
    quick = re.compile(joined or "(?!)", rules[0][1] if rules else 0)
    return _Layer(rank=rank, depth=depth, prefix=prefix, rules=compiled[::-1], quick=quick)


def _read_rules(path: str) -> list[str]:
    """The usable rule lines of an ignore file; none when it is missing, not a regular
    file (a symlink is not followed) or unreadable."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        return []
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return []
        data = os.read(fd, MAX_IGNORE_BYTES)
    except OSError:
        return []
    finally:
        os.close(fd)
    text = data.decode("utf-8", "replace")
    return [line for line in text.splitlines() if _usable(line)]


def _usable(line: str) -> bool:
    """Not blank, not a comment, and not a glob that could backtrack for long."""
    rule = line.strip()
    if not rule or rule.startswith("#"):
        return False
    return len(_STAR_RUN.findall(rule.removeprefix("!").removeprefix("**/"))) <= MAX_STAR_RUNS
