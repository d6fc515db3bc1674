"""Ignore files: which paths the rules of `.gitignore` (and ripgrep's ignore files) leave out.

Ignore files are honoured at every level, as git does (matched with
`pathspec.GitIgnoreSpec`): a nested file's patterns are relative to its own folder, a
deeper file overrides a shallower one, within a file the last matching rule wins (`!`
re-includes), `.git/info/exclude` ranks below every `.gitignore`. The grep fallback
also passes `.rgignore` and `.ignore`, which rank above `.gitignore` as in ripgrep.

A repository is hostile, and a gitignore glob becomes a backtracking regular expression
that holds the interpreter while it runs: a rule with more than `MAX_STAR_RUNS` runs of
`*` (`*a*a*a*b` takes seconds per long name) is not used, only the first `MAX_RULES`
rules of a file count, and ignore files are read up to `MAX_IGNORE_BYTES`, never
through a symlink.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from coding_harness.daemon.tools.workspace import is_hidden_name

MAX_IGNORE_BYTES = 1_000_000
MAX_STAR_RUNS = 2  # a leading `**/` not counted
MAX_RULES = 2_000  # per ignore file: each path is matched against all of them
MAX_UP = 32  # folders looked at above the workspace for its repository's root
GIT_IGNORE = ".gitignore"
RIPGREP_IGNORES = (".rgignore", ".ignore", GIT_IGNORE)  # highest precedence first
_STAR_RUN = re.compile(r"\*+")
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass(kw_only=True, slots=True, frozen=True)
class Layer:
    """The rules of one ignore file."""

    rank: int  # the precedence of its kind: 0 first
    depth: int  # how deep its folder lies: deeper first within a kind
    prefix: str  # its folder, workspace-relative with a trailing '/', '' at the root
    # For a folder above the workspace: the way down from it to the workspace ('web/').
    lead: str
    rules: tuple[tuple[re.Pattern[str], bool], ...]  # (regex, ignores), last rule first
    quick: re.Pattern[str]  # matches what any rule matches: most paths need no more


Layers = tuple[Layer, ...]  # in precedence order: the first one that matches decides

MakeLayer = Callable[..., "Layer"]  # (lines, *, rank, depth, prefix) -> Layer


def ignored(layers: Layers, rel: str) -> bool:
    """Whether the rules ignore `rel` (a folder ends with '/')."""
    for layer in layers:  # each lies in a folder above `rel`
        sub = layer.lead + rel[len(layer.prefix) :]
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
        top = outer_layers(self._base, self._names)
        self._folders: dict[str, Layers | None] = {
            "": with_folder(top, self._base, "", self._names)
        }

    def ignored(self, rel: str) -> bool:
        """Whether the walk would leave out the file `rel` (or something above it)."""
        folder = rel.rpartition("/")[0]
        layers = self._layers(folder + "/" if folder else "")
        return layers is None or ignored(layers, rel)

    def _layers(self, prefix: str) -> Layers | None:
        """The rules for the entries of folder `prefix`; None when it is left out."""
        if prefix in self._folders:
            return self._folders[prefix]
        parent, _, name = prefix[:-1].rpartition("/")
        above = self._layers(parent + "/" if parent else "")
        layers = None
        named = self._under.startswith(prefix)
        if above is not None and (named or not (is_hidden_name(name) or ignored(above, prefix))):
            layers = with_folder(above, self._base, prefix, self._names)
        self._folders[prefix] = layers
        return layers


def layers_above(
    base: str, under: str, names: Sequence[str], make: MakeLayer | None = None
) -> Layers:
    """The rules of the ignore files in the folders above `under`: those of the
    workspace's own folders, and when the workspace lies inside a git repository,
    those of the folders from the repository's root down to it, as git reads them."""
    layers = outer_layers(base, names, make)
    prefix = ""
    for part in under.split("/")[:-1]:
        layers = with_folder(layers, base, prefix, names, make)
        prefix += part + "/"
    return layers


def outer_layers(base: str, names: Sequence[str], make: MakeLayer | None = None) -> Layers:
    """`.git/info/exclude` and the ignore files of the folders above the workspace up to
    its repository's root (none outside a repository, or more than `MAX_UP` up)."""
    make = make or make_layer
    here = Path(base)
    above = [here, *list(here.parents)[:MAX_UP]]
    top = next((folder for folder in above if (folder / ".git").exists()), None)
    if top is None:
        return ()
    layers: list[Layer] = []
    for distance, folder in enumerate(above[1 : above.index(top) + 1], 1):
        lead = here.relative_to(folder).as_posix() + "/"
        for rank, name in enumerate(names):
            if lines := _read_rules(f"{folder}/{name}"):
                layers.append(make(lines, rank=rank, depth=-distance, prefix="", lead=lead))
    lead = "" if top == here else here.relative_to(top).as_posix() + "/"
    if lines := _read_rules(f"{top}/.git/info/exclude"):
        layers.append(make(lines, rank=len(names), depth=0, prefix="", lead=lead))
    return tuple(sorted(layers, key=lambda layer: (layer.rank, -layer.depth)))


def with_folder(
    inherited: Layers,
    base: str,
    prefix: str,
    names: Sequence[str],
    make: MakeLayer | None = None,
) -> Layers:
    depth = prefix.count("/")
    make = make or make_layer
    added = []
    for rank, name in enumerate(names):
        lines = _read_rules(f"{base}/{prefix}{name}")
        if lines:
            added.append(make(lines, rank=rank, depth=depth, prefix=prefix))
    if not added:
        return inherited
    return tuple(sorted((*inherited, *added), key=lambda layer: (layer.rank, -layer.depth)))


def make_layer(lines: list[str], *, rank: int, depth: int, prefix: str, lead: str = "") -> Layer:
    """pathspec's regular expressions for the rules, made to match a path itself only:
    its `(?P<ps_d>/)` also matches what lies below a folder, which the walk never sees
    (it does not enter an ignored folder) but a search started inside one does."""
    import pathspec  # about 30 ms of imports: only once some ignore file has rules

    spec = pathspec.GitIgnoreSpec.from_lines(lines)
    rules = [
        (rule.regex.pattern.replace("(?P<ps_d>/)", "/$"), rule.regex.flags, rule.include)
        for rule in spec.patterns
        if rule.include is not None and rule.regex is not None
    ]
    compiled = tuple((re.compile(text, flags), bool(ignores)) for text, flags, ignores in rules)
    joined = "|".join(f"(?:{text})" for text, _, _ in rules)
    quick = re.compile(joined or "(?!)", rules[0][1] if rules else 0)
    return Layer(
        rank=rank, depth=depth, prefix=prefix, lead=lead, rules=compiled[::-1], quick=quick
    )


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
    return [line for line in text.splitlines() if _usable(line)][:MAX_RULES]


def _usable(line: str) -> bool:
    """Not blank, not a comment, and not a glob that could backtrack for long."""
    rule = line.strip()
    if not rule or rule.startswith("#"):
        return False
    return len(_STAR_RUN.findall(rule.removeprefix("!").removeprefix("**/"))) <= MAX_STAR_RUNS
