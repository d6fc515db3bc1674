"""A session's title: its first task, on one line, cut to TITLE_CHARS."""

from __future__ import annotations

from collections.abc import Iterable

from coding_harness.daemon.agent.seams import JSONObject

TITLE_CHARS = 60


def title_of(history: Iterable[JSONObject], first_task: str = "") -> str:
    """The first user message on one line, cut to TITLE_CHARS; before the history has
    one, `first_task` (the running first turn's text) so cut ("" without either)."""
    for message in [*history, {"role": "user", "content": first_task}]:
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, str) and content.strip():
            words = " ".join(content.split())
            return words if len(words) <= TITLE_CHARS else words[: TITLE_CHARS - 1] + "…"
    return ""
