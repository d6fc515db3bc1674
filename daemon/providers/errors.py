"""The one place where HTTP answers that failed become model errors.

The error classes are the agent's (`agent/model_errors.py`).
`error_from_response` reads an HTTP answer that is not a success; transport
failures (no answer, timeouts, dropped connections) are translated in
`transport_errors.py`, and errors reported inside a successful answer in
`answer_errors.py`. Messages are one line, name the endpoint, and say what to
do where we know.
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from collections.abc import Mapping
from datetime import UTC
from typing import Any

from coding_harness.daemon.agent.model_errors import (
    ModelBadRequest,
    ModelContextExceeded,
    ModelError,
    ModelRateLimited,
    ModelRequestRejected,
    ModelServerError,
    ModelToolsUnsupported,
)
from coding_harness.daemon.config.profiles import ProviderProfile
from coding_harness.protocol.config_files import GLOBAL_CONFIG_NAME

CONFIG_HINT = f"~/{GLOBAL_CONFIG_NAME}"
SERVER_MESSAGE_LIMIT = 300
# What a server says when the conversation no longer fits, or the account is spent.
CONTEXT_PATTERN = re.compile(
    r"context[ _](length|size|window)|maximum context|exceeds? (the )?(available )?context"
    r"|exceed_context",
    re.IGNORECASE,
)
QUOTA_PATTERN = re.compile(
    r"insufficient_quota|quota|billing|spend(ing)? limit|usage[ _]limit", re.IGNORECASE
)
# A server that could not parse what it was sent: asking again gives the same answer.
PARSE_FAILURE_PATTERN = re.compile(r"failed to parse", re.IGNORECASE)
# A server that says the request itself is invalid (pydantic, FastAPI, OpenAI, llama.cpp
# wording). Some report it as HTTP 500 (llama-cpp-python); asking again cannot help.
INVALID_REQUEST_PATTERN = re.compile(
    r"(failed|unable) to parse|(could not|cannot) parse|validation error"
    r"|input should be|field required|unprocessable|invalid[ _]request|\binvalid\b",
    re.IGNORECASE,
)
# A model that takes no tools (Ollama, LM Studio, vLLM without a tool parser).
TOOLS_UNSUPPORTED_PATTERN = re.compile(
    r"does not support tools|tools? (is|are) not supported|does not support (function|tool)"
    r"|auto\W+tool choice requires",
    re.IGNORECASE,
)
# Statuses that by themselves say the request is invalid.
BAD_REQUEST_STATUSES = frozenset({400, 422})
BAD_REQUEST_HINT = "; the server refused the request as invalid, so it was not asked again"


def error_from_response(
    status: int, body_text: str, headers: Mapping[str, str], profile: ProviderProfile
) -> ModelError:
    """The ModelError for an HTTP answer with a non-success `status`."""
    endpoint = profile.endpoint
    message, kinds = _describe(body_text)
    said = squash(message) or "(empty body)"
    detail = f"HTTP {status} from {profile.name} ({endpoint}): {said}{_request_id(headers)}"
    if status == 429:
        return _rate_limited(detail, f"{message} {kinds}", headers, endpoint)
    if 400 <= status < 600 and CONTEXT_PATTERN.search(f"{message} {kinds}"):
        return ModelContextExceeded(
            f"{detail}; the conversation no longer fits the model's context:"
            " compact it or start a new session",
            endpoint=endpoint,
            status=status,
        )
    if 400 <= status < 600 and TOOLS_UNSUPPORTED_PATTERN.search(message):
        return ModelToolsUnsupported(detail, endpoint=endpoint, status=status)
    if _is_bad_request(status, f"{message} {kinds}"):
        return ModelBadRequest(detail + BAD_REQUEST_HINT, endpoint=endpoint, status=status)
    if 500 <= status < 600:
        return ModelServerError(
            detail,
            endpoint=endpoint,
            status=status,
            retryable=_should_retry(headers, True),
            retry_after=parse_retry_after(headers),
        )
    return ModelRequestRejected(
        detail + _rejection_hint(status, profile),
        endpoint=endpoint,
        status=status,
        retryable=_should_retry(headers, False),
    )


def _is_bad_request(status: int, said: str) -> bool:
    """Whether an answer says the request itself is invalid. Of the 5xx only a plain
    500 is read for it: a 502-504 ("invalid response") speaks of a gateway or itself."""
    if status in BAD_REQUEST_STATUSES:
        return True
    if status == 500:
        return INVALID_REQUEST_PATTERN.search(said) is not None
    return 500 < status < 600 and PARSE_FAILURE_PATTERN.search(said) is not None


def _rate_limited(
    detail: str, said: str, headers: Mapping[str, str], endpoint: str
) -> ModelRateLimited:
    retry_after = parse_retry_after(headers)
    quota = QUOTA_PATTERN.search(said) is not None and retry_after is None
    if quota:
        detail += "; the account's quota or spend limit is used up"
    elif retry_after is not None:
        detail += f"; retry after {retry_after:g} s"
    return ModelRateLimited(
        detail,
        endpoint=endpoint,
        retryable=_should_retry(headers, not quota),
        retry_after=retry_after,
    )


def _rejection_hint(status: int, profile: ProviderProfile) -> str:
    if status in (401, 403):
        if profile.api_key_env:
            return f"; check the API key in ${profile.api_key_env}"
        return f"; the profile names no api_key_env: add one in {CONFIG_HINT}"
    if status == 404:
        return f"; check the model {profile.model!r} and the endpoint in {CONFIG_HINT}"
    if status == 413:
        return "; the request is too large: compact the conversation"
    return ""


def _should_retry(headers: Mapping[str, str], default: bool) -> bool:
    value = _header(headers, "x-should-retry")
    if value is None:
        return default
    return value.strip().lower() == "true"


def _request_id(headers: Mapping[str, str]) -> str:
    for name in ("x-request-id", "request-id", "x-amzn-requestid"):
        value = _header(headers, name)
        if value:
            return f" (request id {value})"
    return ""


def _header(headers: Mapping[str, str], name: str) -> str | None:
    return next((value for key, value in headers.items() if key.lower() == name), None)


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait, from `retry-after` (seconds or HTTP date) or `retry-after-ms`."""
    raw = _header(headers, "retry-after")
    if raw is not None:
        return _retry_seconds(raw, time.time() if now is None else now)
    raw_ms = _header(headers, "retry-after-ms")
    if raw_ms is not None:
        try:
            return max(0.0, float(raw_ms) / 1000)
        except ValueError:
            return None
    return None


def _retry_seconds(raw: str, now: float) -> float | None:
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - now)


def server_message(body_text: str) -> str:
    """What the server said, on one line, at most SERVER_MESSAGE_LIMIT characters."""
    return squash(_describe(body_text)[0]) or "(empty body)"


def _describe(body_text: str) -> tuple[str, str]:
    """(the server's message, its error code and type) from an error body."""
    text = body_text.strip()
    try:
        data: Any = json.loads(text)
    except ValueError:
        return text, ""
    error = data.get("error", data) if isinstance(data, dict) else None
    if isinstance(error, str) and error:
        return error, ""
    if not isinstance(error, dict):
        return text, ""
    kinds = " ".join(v for v in (error.get("code"), error.get("type")) if isinstance(v, str))
    return _message_in(error) or text, kinds


def _message_in(error: dict[str, Any]) -> str | None:
    message, metadata = error.get("message"), error.get("metadata")
    raw = metadata.get("raw") if isinstance(metadata, dict) else None
    parts = [p for p in (message, raw) if isinstance(p, str) and p]
    if parts:
        return ": ".join(parts)
    detail = error.get("detail")
    if detail:
        return detail if isinstance(detail, str) else json.dumps(detail)
    return None


def squash(text: str) -> str:
    """`text` on one line, cut to SERVER_MESSAGE_LIMIT characters."""
    flat = " ".join(text.split())
    if len(flat) <= SERVER_MESSAGE_LIMIT:
        return flat
    return flat[: SERVER_MESSAGE_LIMIT - 1].rstrip() + "…"
