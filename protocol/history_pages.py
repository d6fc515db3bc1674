"""Reading `session.history` page by page: the whole history, or one long message.

The daemon answers in pages of at most 4 MiB (docs/protocol.md); a message
too long for one page comes in slices of its `content`. These helpers follow
`next_offset` and `next_text_offset` and join the slices again.
"""

from __future__ import annotations

from coding_harness.protocol import methods

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from coding_harness.protocol.client import Connection


def read_history(
    conn: Connection, session: str, *, offset: int = 0, limit: int | None = None
) -> list[dict[str, Any]]:
    """Messages from `offset` (negative: from the end), at most `limit`, each whole."""
    messages: list[dict[str, Any]] = []
    params: dict[str, Any] = {"session": session, "offset": offset}
    if limit is not None:
        params["limit"] = limit
    while True:
        page = conn.request(methods.SESSION_HISTORY, params)
        join_page(messages, page)
        following = next_page_params(session, page, len(messages), limit)
        if following is None:
            return messages
        params = following


def next_page_params(
    session: str, page: dict[str, Any], fetched: int = 0, limit: int | None = None
) -> dict[str, Any] | None:
    """The params of the page after `page`, or None when it was the last one wanted
    (`fetched` messages so far, at most `limit`)."""
    following, text_offset = page.get("next_offset"), page.get("next_text_offset") or 0
    if following is None:
        return None
    params: dict[str, Any] = {"session": session, "offset": following}
    if text_offset:  # the rest of a long message
        params["text_offset"] = text_offset
    elif limit is not None:
        if fetched >= limit:
            return None
        params["limit"] = limit - fetched
    return params


def read_message_text(conn: Connection, session: str, index: int) -> str:
    """The whole `content` of message `index`, however long."""
    found = read_history(conn, session, offset=index, limit=1)
    content = found[0].get("content") if found else None
    return content if isinstance(content, str) else ""


def join_page(messages: list[dict[str, Any]], page: dict[str, Any]) -> None:
    """Add a page's messages to `messages`, joining a long message's slices."""
    partial = page.get("partial") or {}
    for message in page.get("messages") or []:
        if partial.get("start") and messages:
            earlier = messages[-1]
            earlier["content"] = str(earlier.get("content") or "") + str(message["content"])
        else:
            messages.append(dict(message))
