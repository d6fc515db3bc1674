"""Transport failures: the one place where an `httpx` exception becomes a ModelError.

A request that got no HTTP answer at all (refused, DNS, connect timeout), one
that httpx timed out (a write, a wait for a pooled connection; the silences
of an answer are timed by `stall.py`), and a connection that dropped in the
middle of an answer (over HTTP/1.1 or HTTP/2) are told apart here, each with
a one-line message that names the endpoint and what to do.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx

from coding_harness.daemon.agent.model_errors import (
    ModelBadResponse,
    ModelError,
    ModelStreamCut,
    ModelTimeout,
    ModelUnavailable,
)
from coding_harness.daemon.providers.errors import CONFIG_HINT

_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0"})
_DNS_TEXT = re.compile(
    r"name or service not known|nodename nor servname|name resolution|getaddrinfo", re.IGNORECASE
)


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
