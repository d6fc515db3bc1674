"""What a provider client reports about each raw request, for `harness --debug`.

A `Model` made with an `ExchangeRecorder` opens an `Exchange` per HTTP
request: the request line (endpoint, headers with the key left out, the body
exactly as sent) is written when it goes out; the status, the body as
received (the raw server-sent events of a stream, the JSON of a whole answer,
the text of an error), the timings and any error once it ends. The pieces of
the body come in through the request's `StallWatch` (`bodies.py`,
`openai_stream.py` report each piece there). Providers know nothing of
sessions: the recorder behind this interface (`daemon/sessions/debug_log.py`) decides
where the lines go and redacts them.
"""

from __future__ import annotations

import time
from typing import Protocol

from coding_harness.daemon.agent.seams import JSONObject


class ExchangeRecorder(Protocol):
    """Where the lines of a model call go (one JSON object each)."""

    def write(self, entry: JSONObject) -> None: ...


def shown_headers(headers: dict[str, str]) -> dict[str, str]:
    """Request headers as recorded: the Authorization value never appears."""
    return {
        name: ("Bearer [redacted]" if name.lower() == "authorization" else value)
        for name, value in headers.items()
    }


class Exchange:
    """The record of one request and its response."""

    def __init__(
        self,
        recorder: ExchangeRecorder,
        *,
        endpoint: str,
        headers: dict[str, str],
        body: JSONObject,
    ) -> None:
        self._recorder = recorder
        self._endpoint = endpoint
        self._started = time.monotonic()
        self._status: int | None = None
        self._headers_after: float | None = None
        self._pieces: list[bytes] = []
        recorder.write(
            {
                "kind": "request",
                "at": time.time(),
                "endpoint": endpoint,
                "headers": shown_headers(headers),
                "body": body,
            }
        )

    def answered(self, status: int) -> None:
        """The response's status line and headers came."""
        self._status = status
        self._headers_after = time.monotonic() - self._started

    def piece(self, data: bytes) -> None:
        """One piece of the response body, as read."""
        self._pieces.append(data)

    def finish(self, error: BaseException | None = None) -> None:
        """The request ended (well or not): write the response line."""
        entry: JSONObject = {
            "kind": "response",
            "at": time.time(),
            "endpoint": self._endpoint,
            "status": self._status,
            "headers_after_seconds": _rounded(self._headers_after),
            "elapsed_seconds": _rounded(time.monotonic() - self._started),
            "body": b"".join(self._pieces).decode("utf-8", errors="replace"),
        }
        if error is not None:
            entry["error"] = f"{type(error).__name__}: {error}"
        self._recorder.write(entry)


def _rounded(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 4)
