"""The ModelError tree, and the one place where HTTP failures become it.

Everything a provider can go wrong with is one of these classes; nothing above
the provider layer ever sees an `httpx` exception. Two translators live here:
`translate_httpx_error` for transport failures (no answer, timeouts, dropped
connections) and `error_from_response` for an HTTP answer that is not a success.

    ModelError
    +-- ModelUnavailable       nothing answers: refused, connect timeout, DNS
    +-- ModelTimeout           connected, then silence past the idle timeout
    +-- ModelRateLimited       429 (any error may carry retry_after from the server)
    +-- ModelRequestRejected   4xx: bad request, key, model, size
    |   +-- ModelContextExceeded   the conversation does not fit the context
    +-- ModelServerError       5xx
    +-- ModelBadResponse       a success status with a body we cannot use
    +-- ModelStreamCut         the stream ended before the answer did

Messages are one line, name the endpoint, and say what to do where we know.
"""

from __future__ import annotations

import email.utils
import json
import re
import socket
import time
from collections.abc import Iterator, Mapping
from datetime import UTC
from typing import Any, ClassVar
from urllib.parse import urlsplit

import httpx

from coding_harness.daemon.config import GLOBAL_CONFIG_NAME, ProviderProfile

CONFIG_HINT = f"~/{GLOBAL_CONFIG_NAME}"
SERVER_MESSAGE_LIMIT = 300
_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0"})
_CONTEXT_PATTERN = re.compile(
    r"context[ _](length|size|window)|maximum context|exceeds? (the )?(available )?context"
    r"|exceed_context",
    re.IGNORECASE,
)
_QUOTA_PATTERN = re.compile(r"insufficient_quota|quota|billing|spend(ing)? limit", re.IGNORECASE)
_DNS_TEXT = re.compile(
    r"name or service not known|nodename nor servname|name resolution|getaddrinfo", re.IGNORECASE
)
_UNFIXABLE_5XX = re.compile(r"failed to parse", re.IGNORECASE)


class ModelError(Exception):
    """A provider request failed; `message` is one line fit to show a user."""

    default_retryable: ClassVar[bool] = False

    def __init__(
        self,
        message: str,
        *,
        endpoint: str,
        status: int | None = None,
        retryable: bool | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.endpoint = endpoint
        self.status = status
        self.retryable = self.default_retryable if retryable is None else retryable
        self.retry_after = retry_after

    def amend(self, text: str) -> None:
        """Add `text` to the message (the same line), e.g. why it was not retried."""
        self.message = f"{self.message}{text}"
        self.args = (self.message,)


class ModelUnavailable(ModelError):
    default_retryable = True


class ModelTimeout(ModelError):
    default_retryable = True


class ModelRateLimited(ModelError):
    default_retryable = True

    def __init__(
        self,
        message: str,
        *,
        endpoint: str,
        status: int | None = 429,
        retryable: bool | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(
            message, endpoint=endpoint, status=status, retryable=retryable, retry_after=retry_after
        )


class ModelRequestRejected(ModelError):
    default_retryable = False


class ModelContextExceeded(ModelRequestRejected):
    pass


class ModelServerError(ModelError):
    default_retryable = True


class ModelBadResponse(ModelError):
    default_retryable = False


class ModelStreamCut(ModelError):
    default_retryable = True


# --- transport failures -------------------------------------------------------


def translate_httpx_error(
    exc: Exception, endpoint: str, timeout: httpx.Timeout | None = None
) -> ModelError:
    """The ModelError for an exception raised by httpx while talking to `endpoint`."""
    if isinstance(exc, httpx.ConnectTimeout):
        return _unavailable(endpoint, _seconds("connection timed out", timeout, "connect"))
    if isinstance(exc, httpx.ConnectError):
        return _unavailable(endpoint, _connect_reason(exc))
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL):
        return ModelUnavailable(
            f"cannot use the endpoint {endpoint} ({exc}); fix it in {CONFIG_HINT}",
            endpoint=endpoint,
            retryable=False,
        )
    if isinstance(exc, httpx.TimeoutException):
        return ModelTimeout(_timeout_message(exc, endpoint, timeout), endpoint=endpoint)
    if isinstance(exc, httpx.NetworkError | httpx.RemoteProtocolError):
        return ModelStreamCut(
            f"the connection to {endpoint} dropped before the answer was complete"
            f" ({_first_line(exc) or type(exc).__name__})",
            endpoint=endpoint,
        )
    if isinstance(exc, httpx.DecodingError | httpx.TooManyRedirects):
        return ModelBadResponse(
            f"unusable answer from {endpoint}: {_first_line(exc)}", endpoint=endpoint
        )
    return ModelError(
        f"request to {endpoint} failed: {_first_line(exc) or type(exc).__name__}",
        endpoint=endpoint,
    )


def _unavailable(endpoint: str, reason: str) -> ModelUnavailable:
    host = (urlsplit(endpoint).hostname or "").lower()
    if host in _LOCAL_HOSTS:
        advice = f"start one or set an endpoint in {CONFIG_HINT}"
    else:
        advice = f"check the network, or the endpoint in {CONFIG_HINT}"
    return ModelUnavailable(
        f"no model server answers at {endpoint} ({reason}); {advice}", endpoint=endpoint
    )


def _timeout_message(exc: Exception, endpoint: str, timeout: httpx.Timeout | None) -> str:
    if isinstance(exc, httpx.WriteTimeout):
        what = _seconds("nothing sent", timeout, "write")
        return f"could not send the request to {endpoint} ({what})"
    if isinstance(exc, httpx.PoolTimeout):
        what = _seconds("no free connection", timeout, "pool")
        return f"too many requests in flight to {endpoint} ({what})"
    return f"the model server at {endpoint} went silent ({_seconds('no data', timeout, 'read')})"


def _seconds(what: str, timeout: httpx.Timeout | None, phase: str) -> str:
    limit = None if timeout is None else timeout.as_dict().get(phase)
    return what if limit is None else f"{what} within {limit:g} s"


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """The exception, its causes and contexts, and the members of exception groups."""
    pending: list[BaseException] = [exc]
    seen: set[int] = set()
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        pending.extend(e for e in (current.__cause__, current.__context__) if e is not None)


def _connect_reason(exc: httpx.ConnectError) -> str:
    causes = list(_causes(exc))
    if any(isinstance(c, socket.gaierror) or _DNS_TEXT.search(str(c)) for c in causes):
        return "host not found"
    if any(isinstance(c, ConnectionRefusedError) or "refused" in str(c).lower() for c in causes):
        return "connection refused"
    for cause in causes:
        if isinstance(cause, OSError) and cause.strerror:
            return cause.strerror.lower()
    return _first_line(exc) or "cannot connect"


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else ""


# --- HTTP answers that are not a success ----------------------------------------


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
    if 400 <= status < 600 and _CONTEXT_PATTERN.search(f"{message} {kinds}"):
        return ModelContextExceeded(
            f"{detail}; the conversation no longer fits the model's context:"
            " compact it or start a new session",
            endpoint=endpoint,
            status=status,
        )
    if 500 <= status < 600:
        fixable = _UNFIXABLE_5XX.search(said) is None
        return ModelServerError(
            detail,
            endpoint=endpoint,
            status=status,
            retryable=_should_retry(headers, fixable),
            retry_after=parse_retry_after(headers),
        )
    return ModelRequestRejected(
        detail + _rejection_hint(status, profile),
        endpoint=endpoint,
        status=status,
        retryable=_should_retry(headers, False),
    )


def _rate_limited(
    detail: str, said: str, headers: Mapping[str, str], endpoint: str
) -> ModelRateLimited:
    retry_after = parse_retry_after(headers)
    quota = _QUOTA_PATTERN.search(said) is not None and retry_after is None
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
