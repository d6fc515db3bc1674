"""`session.history` in pages no larger than `PAGE_LIMIT`.

A page holds whole messages from `offset` on, as many as fit (and at most
`limit`). A message too large for a page by itself comes in parts: each page
holds one slice of its `content`, `partial` says which characters, and
`next_offset` / `next_text_offset` point at the rest. A message that is large
for another reason (a huge tool call) has its longest strings cut instead,
with a note. docs/protocol.md describes the answer.
"""

from __future__ import annotations

from typing import Any

from coding_harness.daemon.server.outgoing import PAGE_LIMIT, cut_strings, encode_safely
from coding_harness.protocol import errors

JSONObject = dict[str, Any]
# The page's own members around the messages.
_PAGE_OVERHEAD = 512


def history_page(
    messages: list[JSONObject],
    *,
    offset: int = 0,
    limit: int | None = None,
    text_offset: int = 0,
    budget: int = PAGE_LIMIT,
) -> JSONObject:
    """The page of `messages` that starts at `offset` (negative: from the end)."""
    total = len(messages)
    start = min(total, offset if offset >= 0 else max(0, total + offset))
    if text_offset:
        return _part(messages, start, text_offset, budget)
    end = total if limit is None else min(total, start + limit)
    page: list[JSONObject] = []
    used = _PAGE_OVERHEAD
    index = start
    while index < end:
        size = _size(messages[index], budget)
        if used + size > budget:
            if not page:
                return _part(messages, index, 0, budget)
            break
        page.append(messages[index])
        used += size
        index += 1
    return _page(page, start, total, index, 0)


def _page(
    page: list[JSONObject],
    start: int,
    total: int,
    next_offset: int,
    next_text_offset: int,
    partial: JSONObject | None = None,
) -> JSONObject:
    return {
        "messages": page,
        "offset": start,
        "total": total,
        "next_offset": next_offset if next_offset < total else None,
        "next_text_offset": next_text_offset,
        "partial": partial,
    }


def _size(message: JSONObject, budget: int) -> int:
    """Encoded size; a content longer than the budget cannot fit, whatever its bytes."""
    content = message.get("content")
    if isinstance(content, str) and len(content) > budget:
        return budget + 1
    return len(encode_safely(message))


def _part(messages: list[JSONObject], index: int, text_offset: int, budget: int) -> JSONObject:
    total = len(messages)
    if index >= total:
        raise errors.InvalidParams(f"text_offset needs a message at offset {index}")
    message = messages[index]
    content = message.get("content")
    if not isinstance(content, str):
        if text_offset:
            raise errors.InvalidParams(f"message {index} has no text content to page through")
        return _cut_whole(message, index, total, budget)
    if text_offset >= len(content):
        raise errors.InvalidParams(
            f"text_offset {text_offset} is past the end of message {index} "
            f"({len(content)} characters)"
        )
    frame = len(encode_safely({**message, "content": ""})) + _PAGE_OVERHEAD
    if frame > budget // 2:
        return _cut_whole(message, index, total, budget)
    end = _slice_end(content, text_offset, budget - frame)
    partial = {"index": index, "start": text_offset, "end": end, "chars": len(content)}
    piece = {**message, "content": content[text_offset:end]}
    if end < len(content):
        return _page([piece], index, total, index, end, partial)
    return _page([piece], index, total, index + 1, 0, partial)


def _slice_end(content: str, start: int, room: int) -> int:
    """Where a slice of `content` from `start` that encodes to at most `room` bytes ends."""
    chars = min(len(content) - start, room)  # a character is at least one byte
    while chars > 1:
        size = len(encode_safely(content[start : start + chars])) - 3  # quotes, newline
        if size <= room:
            break
        chars = max(1, chars * room // size - 8)
    return start + chars


def _cut_whole(message: JSONObject, index: int, total: int, budget: int) -> JSONObject:
    size = len(encode_safely(message)) + _PAGE_OVERHEAD
    cut, cuts = cut_strings(message, size - budget)
    partial = {"index": index, "cut": cuts}
    return _page([cut], index, total, index + 1, 0, partial)
