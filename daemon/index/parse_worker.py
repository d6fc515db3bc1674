"""Parsing many files at once: in this thread for a few, in child processes for many.

tree-sitter holds the interpreter lock while it parses, so a cold build of a big
tree parses in `WORKERS` child processes (`python -m
coding_harness.daemon.index.parse_worker ROOT`, isolated: `-I`), each given its share of the paths
on standard input (one JSON string per line) and answering one JSON line per file.
JSON, not pickle: a child parses the repository's files, and what it sends back is
read as data only. The children get no secret from the daemon's environment, and
are killed when the build is cancelled or runs past its time limit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from coding_harness.daemon.index.languages import grammar, language_of
from coding_harness.daemon.index.tags import MAX_FILE_BYTES, Definition, FileTags, file_tags
from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.files import read_regular

IN_PROCESS_UP_TO = 64  # files; more go to child processes
IN_PROCESS_BYTES = 512_000  # and so do batches bigger than this
IN_PROCESS_FILE = 100_000  # or holding a file bigger than this
WORKERS = max(1, min(2, os.cpu_count() or 1))
BUILD_TIME_LIMIT = 900.0  # seconds for one batch in child processes
_ENV_KEPT = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR")

Progress = Callable[[int], None]  # files parsed so far in this batch
Parsed = dict[str, FileTags]


class ParseCancelled(Exception):
    """The batch was stopped (`stop` set) or ran past its time limit."""


def tags_of(root: Path, path: str) -> FileTags:
    """One file's tags; an unreadable file or unknown language gives empty tags, and so
    does a file the parser fails on (the reason is kept)."""
    language = language_of(path)
    if language is None:
        return FileTags(skipped="not a known language")
    try:  # by the file tools' rules: never through a symlink, a FIFO or a device
        data, _ = read_regular(root / path, path, MAX_FILE_BYTES + 1)
    except ToolRefusal as refusal:
        return FileTags(skipped=f"unreadable: {refusal}")
    try:
        return file_tags(data, grammar(language))
    except Exception as exc:  # a grammar's fault on a hostile file: that file only
        return FileTags(skipped=f"the parser failed on it: {type(exc).__name__}")


def parse_files(
    root: Path,
    paths: list[str],
    progress: Progress | None = None,
    stop: threading.Event | None = None,
    sizes: Mapping[str, int] | None = None,
) -> Parsed:
    """The paths' tags; `ParseCancelled` once `stop` is set. A path a parser process
    died before answering is left out, so the next refresh tries it again.

    Only a few small files are parsed in this process: tree-sitter holds the
    interpreter lock while it parses, and a hostile 1 MB file can take seconds."""
    weights = [sizes.get(path, 0) for path in paths] if sizes is not None else [0]
    small = sum(weights) <= IN_PROCESS_BYTES and max(weights, default=0) <= IN_PROCESS_FILE
    if len(paths) <= IN_PROCESS_UP_TO and small:
        return _parse_here(root, paths, progress, stop)
    return _parse_in_children(root, paths, progress, stop)


def _parse_here(
    root: Path, paths: list[str], progress: Progress | None, stop: threading.Event | None
) -> Parsed:
    parsed: Parsed = {}
    for done, path in enumerate(paths, 1):
        if stop is not None and stop.is_set():
            raise ParseCancelled
        parsed[path] = tags_of(root, path)
        if progress is not None:
            progress(done)
    return parsed


def _parse_in_children(
    root: Path, paths: list[str], progress: Progress | None, stop: threading.Event | None
) -> Parsed:
    shares = [paths[i::WORKERS] for i in range(WORKERS)]
    env = {name: os.environ[name] for name in _ENV_KEPT if name in os.environ}
    argv = [sys.executable, "-I", "-m", "coding_harness.daemon.index.parse_worker", str(root)]
    children: list[subprocess.Popen[bytes]] = []
    try:
        for _ in shares:
            children.append(
                subprocess.Popen(
                    argv,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    env=env,
                    cwd="/",
                )
            )
    except OSError:
        for child in children:
            child.kill()
            child.wait()
        raise
    parsed: Parsed = {}
    lock = threading.Lock()

    def count() -> None:
        if progress is not None:
            with lock:
                progress(len(parsed))

    threads = [
        threading.Thread(target=_feed_and_read, args=(child, share, parsed, count), daemon=True)
        for child, share in zip(children, shares, strict=True)
    ]
    deadline = time.monotonic() + BUILD_TIME_LIMIT
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            while thread.is_alive():
                thread.join(0.1)
                if (stop is not None and stop.is_set()) or time.monotonic() > deadline:
                    raise ParseCancelled
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
            child.wait()
            for thread in threads:
                thread.join(1.0)
            if child.stdout is not None:
                child.stdout.close()
    return parsed  # a child that died left its files out: the next refresh retries them


def _feed_and_read(
    child: subprocess.Popen[bytes], share: list[str], parsed: Parsed, count: Callable[[], None]
) -> None:
    assert child.stdin is not None and child.stdout is not None
    feeder = threading.Thread(target=_feed, args=(child, share), daemon=True)
    feeder.start()
    expected = set(share)
    for line in child.stdout:
        try:
            path, tags = _decode(json.loads(line))
        except (ValueError, TypeError, KeyError, IndexError):
            continue
        if path in expected:
            parsed[path] = tags
            count()
    feeder.join()


def _feed(child: subprocess.Popen[bytes], share: list[str]) -> None:
    assert child.stdin is not None
    try:
        with child.stdin:
            for path in share:
                child.stdin.write(json.dumps(path).encode() + b"\n")
    except OSError:
        pass  # the child died; its files are marked


def _encode(path: str, tags: FileTags) -> str:
    definitions = [[d.name, d.kind, d.line, d.signature] for d in tags.definitions]
    return json.dumps([path, tags.skipped, definitions, tags.references])


def _decode(row: Any) -> tuple[str, FileTags]:
    path, skipped, definitions, references = row
    tags = FileTags(
        definitions=[
            Definition(sys.intern(str(n)), str(k), int(line), str(s))
            for n, k, line, s in definitions
        ],
        references={sys.intern(str(name)): int(count) for name, count in references.items()},
        skipped=str(skipped),
    )
    return str(path), tags


def _lines(stream: Any) -> Iterator[str]:
    for raw in stream:
        line = raw.strip()
        if line:
            yield line


def main() -> None:
    root = Path(sys.argv[1])
    out = sys.stdout
    for line in _lines(sys.stdin):
        path = json.loads(line)
        if not isinstance(path, str):
            continue
        out.write(_encode(path, tags_of(root, path)) + "\n")
    out.flush()


if __name__ == "__main__":
    main()
