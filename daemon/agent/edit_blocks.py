"""Edits a model without tool calls writes as text: search/replace blocks naming the file.

The format (the conflict-marker style models know from many editors and agents):

    calc.py
    <<<<<<< SEARCH
    def div(a, b):
        return a * b
    =======
    def div(a, b):
        return a / b
    >>>>>>> REPLACE

The file's path is the last non-empty line before the block (backticks, a
`File:` label and code fences around it are ignored). An empty SEARCH part
creates the file (or replaces an empty one). `edit_blocks` gives each block
in order and the reply's text without them; a block left unclosed is dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FORMAT_RULES = """\
You cannot call tools here. To change a file, write one block per change:

path/to/file.py
<<<<<<< SEARCH
the exact lines of the file to replace (copy them, with enough lines to be unique)
=======
the new lines
>>>>>>> REPLACE

The line before the block names the file, relative to the workspace. Leave the
SEARCH part empty to create a new file. The user reviews each change; the
project's check runs after the accepted ones and you are shown its result.
Files the request names are shown to you below."""

_START = re.compile(r"^\s*<{5,9} ?SEARCH\s*$")
_MIDDLE = re.compile(r"^\s*={5,9}\s*$")
_END = re.compile(r"^\s*>{5,9} ?REPLACE\s*$")
_FENCE = re.compile(r"^\s*```")


@dataclass(frozen=True, kw_only=True, slots=True)
class EditBlock:
    path: str
    search: str
    replace: str


def edit_blocks(text: str) -> tuple[list[EditBlock], str]:
    """The blocks in `text`, and `text` without them."""
    lines = text.splitlines()
    blocks: list[EditBlock] = []
    kept: list[str] = []
    index = 0
    while index < len(lines):
        if not _START.match(lines[index]):
            kept.append(lines[index])
            index += 1
            continue
        path = _path_before(kept)
        found = _block_from(lines, index + 1)
        if found is None or not path:
            break  # an unclosed block, or no file named: the rest is text
        search, replace, index = found
        blocks.append(EditBlock(path=path, search=search, replace=replace))
    if index < len(lines):
        kept.extend(lines[index:])
    return blocks, "\n".join(line for line in kept if not _FENCE.match(line)).strip()


def _block_from(lines: list[str], start: int) -> tuple[str, str, int] | None:
    middle = next((i for i in range(start, len(lines)) if _MIDDLE.match(lines[i])), None)
    if middle is None:
        return None
    end = next((i for i in range(middle + 1, len(lines)) if _END.match(lines[i])), None)
    if end is None:
        return None
    return _joined(lines[start:middle]), _joined(lines[middle + 1 : end]), end + 1


def _joined(lines: list[str]) -> str:
    return "\n".join(lines) + "\n" if lines else ""


def _path_before(kept: list[str]) -> str:
    """The file named on the last line before a block (taken out of the text)."""
    while kept and (not kept[-1].strip() or _FENCE.match(kept[-1])):
        kept.pop()
    if not kept:
        return ""
    line = kept.pop().strip().strip("`*").strip()
    for label in ("File:", "file:", "Path:", "path:"):
        line = line.removeprefix(label).strip()
    return line.strip("`*:").strip() if " " not in line.strip() else ""
