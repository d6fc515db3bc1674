"""The parser process: `python -I -m coding_harness.daemon.index.parse_worker ROOT SECONDS
NICENESS` (`parse_pool.py` starts it, at niceness 10 below the daemon).

The daemon never runs tree-sitter itself (`parse_pool.py` says why); this child
reads workspace-relative paths on standard input, one JSON string per line, and
answers each in order with one JSON line: the path, why it was skipped (if it
was), its definitions and the names it uses. JSON, not pickle: the child parses
the repository's files, and what it sends back is read as data only.

A file gets SECONDS of processor time: past it the child is ended by SIGPROF
(tree-sitter's query cannot be stopped otherwise), and the daemon lists that
file as too slow. Processor time, not the clock's: the child runs niced, and on
a busy machine a file that waits for a core is not a file that costs too much.
The child's address space is capped at `MEMORY_BYTES`, so a hostile file the
parser would grow without end makes it fail instead.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from coding_harness.daemon.index.beneath import read_beneath
from coding_harness.daemon.index.languages import grammar, language_of
from coding_harness.daemon.index.tags import (
    MAX_FILE_BYTES,
    FileTags,
    file_tags,
)

MEMORY_BYTES = 2 * 2**30  # the child's address space: a parse that needs more fails


def tags_of(root: Path, path: str) -> FileTags:
    """One file's tags; an unreadable file or unknown language gives empty tags, and so
    does a file the parser fails on (the reason is kept)."""
    language = language_of(path)
    if language is None:
        return FileTags(skipped="not a known language")
    try:  # a regular file, no symlink on the way: a folder swapped for one since the walk
        data = read_beneath(root, path, MAX_FILE_BYTES + 1)
    except OSError as exc:
        return FileTags(skipped=f"unreadable: {exc}")
    try:
        return file_tags(data, grammar(language))
    except Exception as exc:  # a grammar's fault on a hostile file: that file only
        return FileTags(skipped=f"the parser failed on it: {type(exc).__name__}")


def encode(path: str, tags: FileTags) -> str:
    return json.dumps([path, tags.skipped, tags.rows, tags.references])


def decode(row: Any) -> tuple[str, FileTags]:
    """A child's answer line, decoded; ValueError, TypeError, KeyError or IndexError
    when it is not one."""
    path, skipped, definitions, references = row
    tags = FileTags(
        rows=[(sys.intern(str(n)), str(k), int(line), str(s)) for n, k, line, s in definitions],
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
    root, seconds, niceness = Path(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    os.nice(niceness)  # background work: the daemon answering its clients comes first
    signal.signal(signal.SIGPROF, signal.SIG_DFL)  # the timer's signal ends the process
    out = sys.stdout
    for line in _lines(sys.stdin):
        path = json.loads(line)
        if not isinstance(path, str):
            break
        signal.setitimer(signal.ITIMER_PROF, seconds)
        tags = tags_of(root, path)
        signal.setitimer(signal.ITIMER_PROF, 0)
        out.write(encode(path, tags) + "\n")
        out.flush()  # the daemon counts the answers to know which file a dead child was on


if __name__ == "__main__":
    main()
