"""Opening a connection to the daemon's socket, and nothing more.

Kept apart from `protocol.client` (and its JSON) so a one-shot can dial the
daemon as the very first thing it does: the daemon, woken from idle, accepts
the connection while the client is still loading the rest of itself. The
socket comes from `_socket`, the C module under `socket`, whose import builds
enum classes for every address family and costs a one-shot run about 3 ms.
"""

from __future__ import annotations

import _socket
import os

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


class DaemonUnreachable(Exception):
    """No daemon answers on the socket (absent, refused, or gone mid-call)."""


def dial(path: Path, timeout: float = 5.0) -> _socket.socket:
    """A connected socket to the daemon at `path`, or DaemonUnreachable naming why."""
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(os.fspath(path))
    except FileNotFoundError as exc:
        sock.close()
        raise DaemonUnreachable(f"no daemon socket at {path}") from exc
    except ConnectionRefusedError as exc:
        sock.close()
        raise DaemonUnreachable(f"nothing listens on {path} (stale socket)") from exc
    except OSError as exc:
        sock.close()
        raise DaemonUnreachable(f"cannot connect to {path}: {exc.strerror or exc}") from exc
    sock.settimeout(None)
    return sock
