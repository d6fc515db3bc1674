"""The JSON-RPC 2.0 core: decoded bytes in, response objects out.

It never sees a socket. It parses hostile input safely, applies the batch
rules of the specification itself (jsonrpcserver answers `[1,2,3]` with one
error), gates every method behind `initialize`, refuses requests with a
retryable "server overloaded" error while the peer has too much unread, and
hands each valid request to jsonrpcserver for method lookup, parameter
binding and result shaping.
Handlers are plain `async def` functions that return a result or raise an
`RpcError`; `MethodTable` adapts them and keeps tracebacks off the wire.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from jsonrpcserver import Error, Success
from jsonrpcserver.async_main import dispatch_to_serializable

from coding_harness.protocol import errors, methods
from coding_harness.protocol.framing import MAX_MESSAGE_BYTES

log = logging.getLogger(__name__)

MAX_BATCH = 100
# Seconds an overloaded client is asked to wait (at least) before it retries.
RETRY_AFTER = 0.1
_ALLOWED_MEMBERS = frozenset({"jsonrpc", "method", "params", "id"})

Handler = Callable[..., Awaitable[Any]]


class Peer(Protocol):
    """What the core needs to know about the connection a message came from."""

    initialized: bool

    @property
    def label(self) -> str: ...

    @property
    def overloaded(self) -> bool:
        """Too much waits unread: new requests are refused, to be retried."""
        ...


class MethodTable:
    """Handlers by method name; registering a name twice is an error."""

    def __init__(self) -> None:
        self._wrapped: dict[str, Callable[..., Awaitable[Any]]] = {}
        self.detached: set[str] = set()

    def register(self, name: str, *, detached: bool = False) -> Callable[[Handler], Handler]:
        """`detached`: the method may take long (a model call); its connection goes on
        reading and answering other requests, and this answer comes when it is ready."""

        def decorator(handler: Handler) -> Handler:
            if name in self._wrapped:
                raise ValueError(f"method {name!r} registered twice")
            self._wrapped[name] = _adapt(name, handler)
            if detached:
                self.detached.add(name)
            return handler

        return decorator

    def names(self) -> list[str]:
        return sorted(self._wrapped)

    def as_jsonrpcserver(self) -> dict[str, Callable[..., Awaitable[Any]]]:
        return dict(self._wrapped)


def _adapt(name: str, handler: Handler) -> Callable[..., Awaitable[Any]]:
    async def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return Success(await handler(*args, **kwargs))
        except errors.RpcError as exc:
            if exc.data is None:
                return Error(exc.code, exc.message)
            return Error(exc.code, exc.message, exc.data)
        except Exception:
            log.exception("method %s failed", name)
            return Error(errors.InternalError.code, f"internal error in {name}; see the daemon log")

    # jsonrpcserver binds params against the signature to produce -32602.
    call.__signature__ = inspect.signature(handler)  # type: ignore[attr-defined]
    return call


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse(raw: bytes) -> Any:
    """Decode one framed message, raising ParseError for anything not strict JSON."""
    try:
        text = raw.decode("utf-8")
        return json.loads(text, parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise errors.ParseError(f"Parse error: {_short(exc)}") from None


def _short(exc: Exception) -> str:
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__


def error_response(exc: errors.RpcError, request_id: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "error": exc.to_wire(), "id": request_id}


def _readable_id(item: dict[str, Any]) -> Any:
    value = item.get("id")
    return value if _valid_id(value) else None


def _valid_id(value: Any) -> bool:
    return value is None or (isinstance(value, str | int) and not isinstance(value, bool))


def _validate(item: Any) -> None:
    if not isinstance(item, dict):
        raise errors.InvalidRequest("Invalid Request: expected a JSON object")
    if item.get("jsonrpc") != "2.0":
        raise errors.InvalidRequest('Invalid Request: "jsonrpc" must be exactly "2.0"')
    if not isinstance(item.get("method"), str):
        raise errors.InvalidRequest('Invalid Request: "method" must be a string')
    if "id" in item and not _valid_id(item["id"]):
        raise errors.InvalidRequest('Invalid Request: "id" must be a string, an integer or null')
    if "params" in item and not isinstance(item["params"], dict | list):
        raise errors.InvalidRequest('Invalid Request: "params" must be an object or an array')
    unknown = set(item) - _ALLOWED_MEMBERS
    if unknown:
        raise errors.InvalidRequest(f"Invalid Request: unknown member(s) {sorted(unknown)}")


class Deferred:
    """The answer to a detached request: the caller sends it when `answer` is done."""

    def __init__(self, answer: Awaitable[dict[str, Any] | None]) -> None:
        self.answer = answer


class Endpoint:
    """Turns one framed message into the response(s) to send, or None.

    A single request to a detached method gives a `Deferred` instead, so the
    transport can go on with the connection's next messages meanwhile.
    """

    def __init__(
        self, table: MethodTable, max_batch: int = MAX_BATCH, max_answer: int = MAX_MESSAGE_BYTES
    ) -> None:
        self._methods = table.as_jsonrpcserver()
        self._detached = frozenset(table.detached)
        self._max_batch = max_batch
        self._max_answer = max_answer

    async def handle(self, raw: bytes, peer: Peer) -> Any:
        try:
            message = parse(raw)
        except errors.ParseError as exc:
            return error_response(exc)
        if not isinstance(message, list):
            if peer.initialized and self._is_detached(message):
                return Deferred(self._single(message, peer))
            return await self._single(message, peer)
        if not message:
            return error_response(errors.InvalidRequest("Invalid Request: empty batch"))
        if len(message) > self._max_batch:
            return error_response(
                errors.InvalidRequest(f"Invalid Request: batch larger than {self._max_batch}")
            )
        return await self._batch(message, peer)

    async def _batch(self, items: list[Any], peer: Peer) -> list[dict[str, Any]] | None:
        """Each item answered in turn; once the answers fill a message, the rest are
        refused as overloaded rather than run."""
        answers: list[dict[str, Any]] = []
        size = 0
        for item in items:
            if size > self._max_answer // 2 and isinstance(item, dict) and "method" in item:
                answer = _refused(item, peer, "this batch's answers are already large")
            else:
                answer = await self._single(item, peer)
            if answer is not None:
                answers.append(answer)
                size += len(json.dumps(answer, ensure_ascii=False))
        return answers or None

    def _is_detached(self, message: Any) -> bool:
        return (
            isinstance(message, dict)
            and "id" in message
            and message.get("method") in self._detached
        )

    async def _single(self, item: Any, peer: Peer) -> dict[str, Any] | None:
        try:
            _validate(item)
        except errors.InvalidRequest as exc:
            return error_response(exc, _readable_id(item) if isinstance(item, dict) else None)
        is_notification = "id" not in item
        if not peer.initialized and item["method"] != methods.INITIALIZE:
            if is_notification:
                log.info(
                    "%s: notification %s before initialize dropped", peer.label, item["method"]
                )
                return None
            return error_response(errors.NotInitialized(), item["id"])
        if peer.overloaded:
            return _refused(item, peer, "too many answers wait unread on this connection")
        response = await dispatch_to_serializable(
            "", self._methods, context=peer, deserializer=lambda _: item, validator=lambda x: x
        )
        if is_notification:
            if isinstance(response, dict) and "error" in response:
                log.info(
                    "%s: notification %s failed: %s", peer.label, item["method"], response["error"]
                )
            return None
        return response if isinstance(response, dict) else None


def _refused(item: Any, peer: Peer, why: str) -> dict[str, Any] | None:
    """The retryable "server overloaded" answer to `item` (None for a notification)."""
    if not isinstance(item, dict) or "id" not in item:
        log.info("%s: notification dropped: %s", peer.label, why)
        return None
    overloaded = errors.ServerOverloaded(
        f"server overloaded: {why}; read them, then retry", {"retry_after": RETRY_AFTER}
    )
    return error_response(overloaded, _readable_id(item))
