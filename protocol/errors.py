"""JSON-RPC error codes as classes, mapped to and from the wire in one place.

The specification's codes (-32700..-32603) and the project's own, which sit in
-32000..-32099. docs/protocol.md lists them all.
"""

from __future__ import annotations

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class RpcError(Exception):
    """An error that travels as a JSON-RPC error object."""

    code: int = -32603
    default_message: str = "Internal error"

    def __init__(self, message: str | None = None, data: Any = None) -> None:
        self.message = message or self.default_message
        self.data = data
        super().__init__(self.message)

    def to_wire(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class ParseError(RpcError):
    code = -32700
    default_message = "Parse error"


class InvalidRequest(RpcError):
    code = -32600
    default_message = "Invalid Request"


class MethodNotFound(RpcError):
    code = -32601
    default_message = "Method not found"


class InvalidParams(RpcError):
    code = -32602
    default_message = "Invalid params"


class InternalError(RpcError):
    code = -32603
    default_message = "Internal error"


class MessageTooLarge(RpcError):
    code = -32000
    default_message = "Message too large"


class NotInitialized(RpcError):
    code = -32001
    default_message = "Not initialized: send initialize first"


class AlreadyInitialized(RpcError):
    code = -32002
    default_message = "Already initialized"


class UnsupportedProtocol(RpcError):
    code = -32003
    default_message = "Unsupported protocol version"


class SessionNotFound(RpcError):
    code = -32010
    default_message = "No such session"


class ApprovalNotPending(RpcError):
    code = -32011
    default_message = "No such pending approval"


class PeerRefused(RpcError):
    code = -32012
    default_message = "Refused for this peer"


class SessionBusy(RpcError):
    code = -32014
    default_message = "A turn is running in this session"


class ServerBusy(RpcError):
    code = -32015
    default_message = "Too many connections"


class ServerOverloaded(RpcError):
    """Retryable: the request was not run. `data.retry_after` suggests seconds to wait."""

    code = -32016
    default_message = "Server overloaded; retry"


class ShuttingDown(RpcError):
    code = -32013
    default_message = "Daemon is shutting down"


class WorktreeFailed(RpcError):
    """git could not do what a worktree request needed; the message says why and the fix."""

    code = -32020
    default_message = "The worktree operation failed"


class HubUnavailable(RpcError):
    """The team hub, or the runner of a session through it, cannot be reached now."""

    code = -32021
    default_message = "The team hub cannot be reached"


_BY_CODE: dict[int, type[RpcError]] = {
    cls.code: cls
    for cls in (
        ParseError,
        InvalidRequest,
        MethodNotFound,
        InvalidParams,
        InternalError,
        MessageTooLarge,
        NotInitialized,
        AlreadyInitialized,
        UnsupportedProtocol,
        SessionNotFound,
        ApprovalNotPending,
        PeerRefused,
        SessionBusy,
        ServerBusy,
        ServerOverloaded,
        ShuttingDown,
        WorktreeFailed,
        HubUnavailable,
    )
}


def from_wire(error: Any) -> RpcError:
    """The exception for an error object received from the other side."""
    if not isinstance(error, dict):
        return InternalError(f"malformed error object: {error!r}")
    code = error.get("code")
    message = str(error.get("message") or "")
    cls = _BY_CODE.get(code) if isinstance(code, int) else None
    exc = (cls or RpcError)(message or None, error.get("data"))
    if cls is None and isinstance(code, int):
        exc.code = code
    return exc


def all_codes() -> dict[int, type[RpcError]]:
    return dict(_BY_CODE)
