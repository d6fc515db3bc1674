"""Frames around untrusted text in what the model reads, and their escaping.

The prompt and tool results put text the harness did not write (project notes,
the repo map, AGENTS.md, fetched pages, web results, MCP results, a turn's
transcript) between delimiters that say where it starts and ends: a tag pair
(`<project-notes>` ... `</project-notes>`) or a bracketed line (`[end of page
content]`). Text that spells a delimiter of its own frame could end the frame
early and speak as the harness. `escape_tags` and `escape_markers` defuse every
spelling of a frame's delimiters inside the text (any case, spaces inside the
brackets), so each frame opens and closes exactly once, where the harness put
it. Escaped, a tag reads `<\\/project-notes>` and a marker `(end of page content)`.
"""

from __future__ import annotations

import functools
import re

# The tag frames of the coding system prompt: text in any of them may spell none.
PROMPT_TAGS = ("project-instructions", "project-notes", "repo-map")


@functools.cache
def _tag_pattern(tags: tuple[str, ...]) -> re.Pattern[str]:
    names = "|".join(re.escape(tag) for tag in tags)
    # `<`, optional `/` (either side of spaces), the name, then anything up to `>`.
    return re.compile(rf"<(\s*/?\s*)((?:{names})(?![\w-]))", re.IGNORECASE)


def escape_tags(text: str, *tags: str) -> str:
    """`text` with each opening or closing tag named in `tags` made inert."""
    if not tags or "<" not in text:
        return text
    return _tag_pattern(tags).sub(_escaped_tag, text)


def _escaped_tag(found: re.Match[str]) -> str:
    slash = "/" in found.group(1)
    return "<\\/" + found.group(2) if slash else "<\\" + found.group(2)


@functools.cache
def _marker_pattern(phrases: tuple[str, ...]) -> re.Pattern[str]:
    spelled = "|".join(r"\s+".join(re.escape(word) for word in p.split()) for p in phrases)
    return re.compile(rf"\[(\s*(?:{spelled})[^\]\n]*)\]?", re.IGNORECASE)


def escape_markers(text: str, *phrases: str) -> str:
    """`text` with each bracketed line starting with one of `phrases` (`end of page
    content`) losing its brackets; an unclosed one loses its opening bracket."""
    if not phrases or "[" not in text:
        return text
    return _marker_pattern(phrases).sub(r"(\1)", text)
