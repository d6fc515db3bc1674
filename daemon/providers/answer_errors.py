"""Errors reported inside a successful answer, and whether asking again can help.

A server that answered 200 can still fail: with an SSE `event: error`, with an
OpenAI-style `{"error": ...}` object in a chunk, or with an error body under a
success status. What it says decides what the error is:

- the conversation does not fit: `ModelContextExceeded`, never retried (compact);
- a spent quota or usage limit: not retried, since asking again cannot help;
- a rate limit: `ModelRateLimited`, retried;
- a request the server refuses (a 4xx code, `invalid_request_error`, a tool
  call it could not parse or validate, a validation error such as pydantic's
  "Input should be a valid string"): not retried;
- anything else (overloaded, `server_error`, a 5xx code, a bare message): a
  `ModelBadResponse` that may be retried, as a 5xx would be.

Whether it is retried also depends on what the user saw: `RetryingModel`
never asks again once part of the answer was shown.
"""

from __future__ import annotations

import json
import re
from typing import Any

from coding_harness.daemon.agent.model_errors import (
    ModelBadResponse,
    ModelContextExceeded,
    ModelError,
    ModelRateLimited,
)
from coding_harness.daemon.providers.errors import (
    CONTEXT_PATTERN,
    PARSE_FAILURE_PATTERN,
    QUOTA_PATTERN,
    squash,
)

_RATE_LIMIT = re.compile(r"rate[ _-]?limit|too many requests", re.IGNORECASE)
_REFUSED = re.compile(
    r"invalid_request|tool_use_failed|authentication|permission|not_found|unsupported"
    r"|validation error|input should be|field required",
    re.IGNORECASE,
)
# 4xx codes that are about timing, not about the request: asking again may help.
_TRANSIENT_4XX = frozenset({408, 409, 425, 429})
CONTEXT_HINT = (
    "; the conversation no longer fits the model's context: compact it or start a new session"
)
QUOTA_HINT = "; the account's quota or usage limit is used up, so it was not asked again"


def error_in_answer(error: Any, endpoint: str) -> ModelError:
    """The exception for an `error` found inside a successful answer (or stream)."""
    message, code, kind = _parts(error)
    label = f" ({code})" if isinstance(code, str) and code else ""
    where = endpoint or "the server"
    text = f"the model server at {where} reported an error{label}: {squash(message)}"
    said = f"{message} {code or ''} {kind}"
    if CONTEXT_PATTERN.search(said):
        return ModelContextExceeded(text + CONTEXT_HINT, endpoint=endpoint)
    if QUOTA_PATTERN.search(said):
        return ModelBadResponse(text + QUOTA_HINT, endpoint=endpoint, retryable=False)
    status = _status(error, code)
    if status == 429 or _RATE_LIMIT.search(said):
        return ModelRateLimited(text, endpoint=endpoint, status=None)
    refused = _REFUSED.search(said) or PARSE_FAILURE_PATTERN.search(said)
    if refused or (status is not None and 400 <= status < 500 and status not in _TRANSIENT_4XX):
        return ModelBadResponse(text, endpoint=endpoint, retryable=False)
    return ModelBadResponse(text, endpoint=endpoint, retryable=True)


def _parts(error: Any) -> tuple[str, Any, str]:
    """(message, code, type) of an error object, or of a bare message."""
    if not isinstance(error, dict):
        return str(error), None, ""
    message = error.get("message") or json.dumps(error)
    kind = error.get("type")
    return str(message), error.get("code"), kind if isinstance(kind, str) else ""


def _status(error: Any, code: Any) -> int | None:
    """An HTTP-like status the error carries: a numeric `code` or `status_code`."""
    candidates = [code]
    if isinstance(error, dict):
        candidates += [error.get("status_code"), error.get("status")]
    for value in candidates:
        if isinstance(value, str) and value.isdigit():
            value = int(value)
        if isinstance(value, int) and not isinstance(value, bool) and 100 <= value < 600:
            return value
    return None
