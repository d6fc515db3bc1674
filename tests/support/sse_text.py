"""The text a recorded server-sent-events body of a chat completion carries."""

from __future__ import annotations

import json


def streamed_text(body: str) -> str:
    """The text a recorded SSE body carries, its deltas joined."""
    chunks = [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: {")]
    return "".join(
        chunk["choices"][0]["delta"].get("content") or "" for chunk in chunks if chunk["choices"]
    )
