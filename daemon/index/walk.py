"""The workspace walk: every visible, not ignored regular file under a root, from stat alone.

What the file tools may not show is never listed: hidden names (`is_hidden_name`:
dotfiles, `~` backups, `#...#`) and all below them; symlinks are neither followed nor
listed; only regular files are. Ignore files are honoured at every level
(`ignore_rules.py`), and an ignored folder is not entered, so nothing below it can be
re-included. Unreadable folders are skipped; paths longer than `MAX_PATH_CHARS` are
not walked, nor names that are not valid UTF-8 or hold a control character (they
could not be shown as they are, or could forge a line); no file's contents are read
but ignore files. A `WalkCache` keeps each folder's listing for the next walk of the
same tree.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from coding_harness.daemon.index.ignore_rules import (
    GIT_IGNORE,
    Layer,
    Layers,
    ignored,
    layers_above,
    make_layer,
    with_folder,
)
from coding_harness.daemon.tools.workspace import is_hidden_name

MAX_FILES = 100_000
MAX_PATH_CHARS = 1_024


@dataclass(kw_only=True, slots=True, frozen=True)
class SourceFile:
    path: str  # workspace-relative, '/'-separated
    size: int
    mtime_ns: int


@dataclass(kw_only=True, slots=True, frozen=True)
class Walk:
    files: list[SourceFile]  # sorted by path
    capped: bool  # the walk stopped at `max_files`; later files are missing


def walk_workspace(
    root: Path,
    *,
    max_files: int = MAX_FILES,
    ignore_names: Sequence[str] = (GIT_IGNORE,),
    under: str = "",
    keep: Callable[[str], bool] | None = None,
    cache: WalkCache | None = None,
) -> Walk:
    """The regular files under `root` that are neither hidden nor ignored.

    `ignore_names`: the ignore files read in every folder, highest precedence first.
    `keep`: when given, only files whose name it accepts are listed (and looked at).
    `under`: walk only this folder ('' or workspace-relative ending in '/'), named
    explicitly, so searched even if ignored; the ignore files above it still apply.
    `cache`: the listings of earlier walks of the same tree with the same `keep`.
    """
    base = os.fspath(root)
    files: list[SourceFile] = []
    top = layers_above(base, under, ignore_names, cache.layer if cache else None)
    pending: list[tuple[str, Layers]] = [(under, top)]
    while pending:
        prefix, inherited = pending.pop()
        layers = with_folder(inherited, base, prefix, ignore_names, cache.layer if cache else None)
        if cache is None:
            folders = _scan(base, prefix, layers, files, max_files + 1, keep)
        else:
            folders = cache.scan(base, prefix, layers, files, max_files + 1, keep)
        if len(files) > max_files:
            del files[max_files:]
            files.sort(key=_by_path)
            return Walk(files=files, capped=True)
        pending.extend((folder, layers) for folder in reversed(folders))
    files.sort(key=_by_path)
    return Walk(files=files, capped=False)


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _plain(name: str) -> bool:
    """Whether a name can be shown as it is: valid UTF-8 (no byte the file system decoder
    had to escape) and no control character (a line break could forge a line)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return _CONTROL.search(name) is None


def _by_path(file: SourceFile) -> str:
    return file.path


def _scan(
    base: str,
    prefix: str,
    layers: Layers,
    files: list[SourceFile],
    limit: int,
    keep: Callable[[str], bool] | None = None,
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
        if is_hidden_name(name) or len(rel) > MAX_PATH_CHARS or not _plain(name):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                if not ignored(layers, rel + "/"):
                    folders.append(rel + "/")
            elif (
                (keep is None or keep(name))
                and entry.is_file(follow_symlinks=False)
                and not ignored(layers, rel)
            ):
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(info.st_mode):
                    files.append(SourceFile(path=rel, size=info.st_size, mtime_ns=info.st_mtime_ns))
                    if len(files) >= limit:
                        break
        except OSError:  # gone since the listing
            continue
    return folders


@dataclass(kw_only=True, slots=True, frozen=True)
class _Listing:
    """One folder's kept file names and folders, under the rules of `layers`."""

    stamp: tuple[int, int]  # the folder's inode and mtime_ns when it was listed
    layers: tuple[int, ...]  # the identities of the rules it was filtered by
    names: tuple[str, ...]
    folders: tuple[str, ...]


class WalkCache:
    """What earlier walks of one tree found, for the next: each folder's filtered
    listing, reused while the folder's inode and mtime are unchanged (adding, removing
    or renaming an entry changes its mtime) and the ignore rules above it are the same,
    so a repeat walk is mostly one `lstat` per file. A listing taken within
    `SETTLE_NS` of the folder's last change is not kept: a second change within the
    same clock tick could leave the mtime as it was."""

    SETTLE_NS = 2_000_000_000
    MAX_LAYERS = 10_000

    def __init__(self) -> None:
        self._listings: dict[str, _Listing] = {}
        self._layers: dict[tuple[object, ...], Layer] = {}

    def layer(
        self, lines: list[str], *, rank: int, depth: int, prefix: str, lead: str = ""
    ) -> Layer:
        """The same rules object for the same rules, so listings can be matched to them."""
        key = (tuple(lines), rank, depth, prefix, lead)
        found = self._layers.get(key)
        if found is None:
            if len(self._layers) >= self.MAX_LAYERS:
                self._layers.clear()
                self._listings.clear()
            found = make_layer(lines, rank=rank, depth=depth, prefix=prefix, lead=lead)
            self._layers[key] = found
        return found

    def scan(
        self,
        base: str,
        prefix: str,
        layers: Layers,
        files: list[SourceFile],
        limit: int,
        keep: Callable[[str], bool] | None,
    ) -> list[str]:
        """`_scan`, from the kept listing when it still holds."""
        folder = f"{base}/{prefix}"
        try:
            info = os.lstat(folder)
        except OSError:
            self._listings.pop(prefix, None)
            return []
        stamp, identity = (info.st_ino, info.st_mtime_ns), tuple(map(id, layers))
        kept = self._listings.get(prefix)
        if kept is None or kept.stamp != stamp or kept.layers != identity:
            found: list[SourceFile] = []
            folders = _scan(base, prefix, layers, found, 2**62, keep)
            kept = _Listing(
                stamp=stamp,
                layers=identity,
                names=tuple(f.path[len(prefix) :] for f in found),
                folders=tuple(folders),
            )
            if time.time_ns() - info.st_mtime_ns > self.SETTLE_NS:
                self._listings[prefix] = kept
            else:
                self._listings.pop(prefix, None)
        for name in kept.names:
            if len(files) >= limit:
                break
            try:
                seen = os.lstat(folder + name)
            except OSError:
                continue  # gone since the listing
            if stat.S_ISREG(seen.st_mode):
                files.append(
                    SourceFile(path=prefix + name, size=seen.st_size, mtime_ns=seen.st_mtime_ns)
                )
        return list(kept.folders)
