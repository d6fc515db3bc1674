"""Answers larger than the daemon's message limit, streamed by the fake model server.

The fake server streams content in 7-character deltas, which for 20 MiB would
be three million events; `stream_in_large_pieces` makes it send 256 KiB
deltas instead for the rest of a test.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from tests.support import fake_model_server
from tests.support.fake_model_server import Reply

PIECE = 256 * 1024


def big_text(size: int) -> str:
    """`size` characters of numbered lines, so a piece out of place shows."""
    line = "0123456789 the quick brown fox jumps over the lazy dog {:09d}\n"
    return "".join(line.format(i) for i in range(size // 64 + 1))[:size]


def stream_in_large_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    original: Callable[[Reply], list[dict[str, Any]]] = fake_model_server.stream_chunks

    def chunks(reply: Reply) -> list[dict[str, Any]]:
        frame = original(Reply(prompt_tokens=reply.prompt_tokens))
        pieces = []
        for start in range(0, len(reply.content), PIECE):
            piece = copy.deepcopy(frame[0])
            piece["choices"][0]["delta"] = {"content": reply.content[start : start + PIECE]}
            pieces.append(piece)
        return [frame[0], *pieces, *frame[1:]]

    monkeypatch.setattr(fake_model_server, "stream_chunks", chunks)
