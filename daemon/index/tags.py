"""One file's tags: the names it defines (with line and signature) and those it uses.

`file_tags` parses a file's bytes with its language's grammar and runs the tags
query over the tree. A definition keeps its name, kind (`function`, `class`,
`method`...), 1-based line and signature (the text of the line that names it,
trimmed and capped; a constant's without its value, which may be a hard-coded
credential); references are counted by name. A file is not parsed when it is
larger than `MAX_FILE_BYTES` (generated or minified code) or looks binary, the
parse of a big file still running after `PARSE_SECONDS` is stopped, and the number
of tags kept per file is capped, so a hostile file costs bounded time and memory.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import NamedTuple

from tree_sitter import Node, QueryCursor, Tree

from coding_harness.daemon.index.languages import Grammar

MAX_FILE_BYTES = 1_000_000
PARSE_SECONDS = 10.0  # a file the parser is still on after this is skipped
TIMED_FROM_BYTES = 64_000
_CHUNK = 65_536
MAX_DEFINITIONS = 2_000  # per file
MAX_REFERENCE_NAMES = 5_000  # distinct names per file
MAX_NAME_CHARS = 200
SIGNATURE_CHARS = 160
_MATCH_LIMIT = 10_000  # in-progress matches tree-sitter keeps; bounds a query's work


class Definition(NamedTuple):
    """One definition, as readers of the index see it."""

    name: str
    kind: str
    line: int  # 1-based
    signature: str


# A definition as the index holds it: a plain tuple of strings and an int, which the
# garbage collector stops tracking after its first pass. A large workspace holds
# hundreds of thousands; as tracked objects (a named tuple, a record) every full
# collection walked them all with the interpreter lock held, and the daemon's event
# loop stood still 50-200 ms each time (bench/daemon_stall.py).
DefinitionRow = tuple[str, str, int, str]  # name, kind, line, signature


@dataclass(kw_only=True, slots=True)
class FileTags:
    rows: list[DefinitionRow] = field(default_factory=list)  # the definitions, held
    references: dict[str, int] = field(default_factory=dict)  # name -> times used
    skipped: str = ""  # why the file was not parsed, if it was not

    @property
    def definitions(self) -> list[Definition]:
        """The file's definitions, made for the reader from the rows held."""
        return [Definition(*row) for row in self.rows]

    def defined_names(self) -> set[str]:
        return {row[0] for row in self.rows}


def file_tags(data: bytes, grammar: Grammar) -> FileTags:
    """The tags of one file's bytes."""
    if len(data) > MAX_FILE_BYTES:
        return FileTags(skipped=f"larger than {MAX_FILE_BYTES:,} bytes")
    if b"\x00" in data[:8192]:
        return FileTags(skipped="binary")
    try:
        tree = _parse(data, grammar)
    except ValueError:  # stopped at its time limit
        return FileTags(skipped=f"it took the parser longer than {PARSE_SECONDS:g} s")
    cursor = QueryCursor(grammar.query, match_limit=_MATCH_LIMIT)
    tags = FileTags()
    for _, captures in cursor.matches(tree.root_node):
        if "ignore" in captures:
            continue
        names = captures.get("name")
        if not names:
            continue
        kind = _kind(captures)
        if kind is None:
            continue
        role, what = kind
        for node in names:
            _add(tags, data, node, role, what)
    return tags


def _parse(data: bytes, grammar: Grammar) -> Tree:
    """The file's tree; `ValueError` when a big file's parse outlasts `PARSE_SECONDS`
    (a small one cannot: the check itself costs a tenth of a small file's parse)."""
    parser = grammar.parser()
    if len(data) <= TIMED_FROM_BYTES:
        return parser.parse(data)
    started = time.monotonic()

    def too_long(*_: object) -> bool:
        return time.monotonic() - started > PARSE_SECONDS

    def read(offset: int, _: object) -> bytes:
        return data[offset : offset + _CHUNK]

    return parser.parse(read, progress_callback=too_long)


def _kind(captures: dict[str, list[Node]]) -> tuple[str, str] | None:
    """('definition' | 'reference', KIND) from a match's capture names."""
    for capture in captures:
        role, dot, what = capture.partition(".")
        if dot and role in ("definition", "reference"):
            return role, what
    return None


def _add(tags: FileTags, data: bytes, node: Node, role: str, kind: str) -> None:
    name = data[node.start_byte : node.end_byte].decode("utf-8", "replace")
    if not name or len(name) > MAX_NAME_CHARS or "\n" in name:
        return
    name = sys.intern(name)
    if role == "reference":
        count = tags.references.get(name)
        if count is not None:
            tags.references[name] = count + 1
        elif len(tags.references) < MAX_REFERENCE_NAMES:
            tags.references[name] = 1
        return
    if len(tags.rows) < MAX_DEFINITIONS:
        line = node.start_point.row + 1
        signature = _signature(data, node.start_byte)
        if kind == "constant" and "=" in signature:  # its value may be a credential
            signature = signature.partition("=")[0].rstrip() + " = ..."
        tags.rows.append((name, kind, line, signature))


def _signature(data: bytes, offset: int) -> str:
    """The line around `offset`, trimmed and capped."""
    start = data.rfind(b"\n", 0, offset) + 1
    end = data.find(b"\n", offset)
    if end == -1:
        end = len(data)
    end = min(end, start + SIGNATURE_CHARS * 4)
    text = data[start:end].decode("utf-8", "replace").strip()
    if len(text) > SIGNATURE_CHARS:
        text = text[: SIGNATURE_CHARS - 3].rstrip() + "..."
    return text
