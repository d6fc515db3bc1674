"""How much of a provider's answer is read: the size caps, in one place.

A hostile or broken server can send a body of any size. Nothing here reads
more than its cap, so memory stays bounded whatever arrives:

- an answer sent whole (one JSON body) is read up to `WHOLE_ANSWER_LIMIT`;
  a larger one is a `ModelBadResponse` that is not retried, read no further;
- an error body is read up to `ERROR_BODY_LIMIT`: only its message is used,
  so the rest is left unread (and the connection closed);
- one server-sent event may hold `EVENT_LIMIT` bytes, and a streamed answer
  (text, reasoning and tool-call arguments together) `STREAMED_ANSWER_LIMIT`
  characters: see `openai_stream.py`.

Every piece read is reported to the request's `StallWatch`.
"""

from __future__ import annotations

import httpx

from coding_harness.daemon.agent.model_errors import ModelBadResponse
from coding_harness.daemon.providers.stall import StallWatch

MIB = 1024 * 1024
WHOLE_ANSWER_LIMIT = 16 * MIB
ERROR_BODY_LIMIT = 64 * 1024
EVENT_LIMIT = 4 * MIB
STREAMED_ANSWER_LIMIT = 64 * MIB


def size_text(size: int) -> str:
    """A cap for people: "16 MiB", "64 KiB"."""
    if size >= MIB:
        return f"{size / MIB:g} MiB"
    return f"{size / 1024:g} KiB"


def too_large(endpoint: str, what: str, limit: int) -> ModelBadResponse:
    return ModelBadResponse(
        f"{what} from {endpoint} is larger than {size_text(limit)}, more than any answer"
        " needs; it was not read further",
        endpoint=endpoint,
        retryable=False,
    )


def _declared_size(response: httpx.Response) -> int | None:
    raw = response.headers.get("content-length", "")
    return int(raw) if raw.isdigit() else None


async def read_whole_answer(response: httpx.Response, watch: StallWatch, endpoint: str) -> str:
    """The body of an answer sent whole, as text; ModelBadResponse past the cap."""
    declared = _declared_size(response)
    if declared is not None and declared > WHOLE_ANSWER_LIMIT:
        raise too_large(endpoint, "the answer", WHOLE_ANSWER_LIMIT)
    pieces: list[bytes] = []
    size = 0
    async for piece in response.aiter_bytes():
        watch.arrived(piece)
        size += len(piece)
        if size > WHOLE_ANSWER_LIMIT:
            raise too_large(endpoint, "the answer", WHOLE_ANSWER_LIMIT)
        pieces.append(piece)
    return b"".join(pieces).decode("utf-8", errors="replace")


async def read_error_body(response: httpx.Response, watch: StallWatch) -> str:
    """The first ERROR_BODY_LIMIT bytes of an error body, as text; the rest is not read."""
    pieces: list[bytes] = []
    size = 0
    async for piece in response.aiter_bytes():
        watch.arrived(piece)
        pieces.append(piece[: ERROR_BODY_LIMIT - size])
        size += len(pieces[-1])
        if size >= ERROR_BODY_LIMIT:
            break
    return b"".join(pieces).decode("utf-8", errors="replace")
