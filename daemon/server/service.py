"""Running under a service manager: readiness, an inherited socket, the discovery record.

- `Notifier` speaks systemd's notify protocol: one datagram to $NOTIFY_SOCKET
  (a path, or `@name` in the abstract namespace) per state change: READY=1
  once the daemon serves, STOPPING=1 when it starts to stop. Without systemd
  it does nothing.
- `take_listen_socket` adopts the listening socket of socket activation:
  fd 3, when $LISTEN_PID is this process and $LISTEN_FDS is at least 1.
- `ServiceContext.from_environment` reads both and unsets NOTIFY_SOCKET and
  the LISTEN_* variables, so no process the agent's tools start inherits them.
- `write_record` / `remove_record` keep the discovery record
  (`protocol/discovery.py`) in the state folder: written atomically once the
  daemon serves, removed before it answers a stop (a removal that fails is
  logged, never raised, so it cannot hold up the stop).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import tempfile
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

SD_LISTEN_FDS_START = 3
LISTEN_VARIABLES = ("LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES")


class ServiceError(Exception):
    """What the service manager handed over cannot be used; the message names the fix."""


class Notifier:
    """Sends sd_notify state lines; a no-op when no notify socket was given."""

    def __init__(self, address: str | None = None) -> None:
        self.address = address or None

    def notify(self, *lines: str) -> bool:
        """Send `lines` as one datagram; False when there is nowhere to send or it failed."""
        target = _notify_target(self.address)
        if target is None:
            return False
        message = "\n".join(lines).encode()
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
                sock.sendto(message, target)
        except OSError as exc:
            log.warning("could not notify the service manager at %s: %s", self.address, exc)
            return False
        return True

    def ready(self, status: str) -> bool:
        return self.notify("READY=1", f"STATUS={status}")

    def stopping(self, status: str) -> bool:
        return self.notify("STOPPING=1", f"STATUS={status}")


def _notify_target(address: str | None) -> str | bytes | None:
    if not address:
        return None
    if address.startswith("@"):
        return b"\0" + address[1:].encode()
    if address.startswith("/"):
        return address
    log.warning("NOTIFY_SOCKET %r is neither a path nor an @abstract name; ignored", address)
    return None


def take_listen_socket(
    environ: MutableMapping[str, str],
    *,
    pid: int | None = None,
    first_fd: int = SD_LISTEN_FDS_START,
) -> socket.socket | None:
    """The listening socket systemd passed, or None; unsets the LISTEN_* variables."""
    fds_text, pid_text = environ.get("LISTEN_FDS"), environ.get("LISTEN_PID")
    for name in LISTEN_VARIABLES:
        environ.pop(name, None)
    if fds_text is None or pid_text is None:
        return None
    if pid_text.strip() != str(os.getpid() if pid is None else pid):
        log.info("LISTEN_PID %s is another process; not socket-activated", pid_text)
        return None
    try:
        count = int(fds_text)
    except ValueError:
        raise ServiceError(f"LISTEN_FDS={fds_text!r} is not a number; fix the unit") from None
    if count < 1:
        return None
    for extra in range(first_fd + 1, first_fd + count):
        log.warning("ignoring extra inherited fd %d: harnessd.socket should listen once", extra)
        with contextlib.suppress(OSError):
            os.close(extra)
    return _adopt(first_fd)


def _adopt(fd: int) -> socket.socket:
    try:
        os.set_inheritable(fd, False)
        sock = socket.socket(fileno=fd)
    except OSError as exc:
        raise ServiceError(
            f"fd {fd} from the service manager is not a socket ({exc.strerror}); "
            "check ListenStream= in harnessd.socket"
        ) from None
    listening = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
    if sock.family != socket.AF_UNIX or sock.type != socket.SOCK_STREAM or not listening:
        sock.detach()
        raise ServiceError(
            f"fd {fd} from the service manager is not a listening Unix stream socket; "
            "use ListenStream=%t/coding-harness/harnessd.sock in harnessd.socket"
        )
    name = sock.getsockname()
    if not isinstance(name, str) or not name.startswith("/"):
        sock.detach()
        raise ServiceError(
            "the inherited socket has no path (abstract or unnamed); the daemon serves only "
            "on a socket file: use a path in ListenStream="
        )
    return sock


@dataclass(kw_only=True, slots=True)
class ServiceContext:
    """What the daemon was handed at start and where it announces itself."""

    notifier: Notifier = field(default_factory=Notifier)
    listen_socket: socket.socket | None = None
    record_path: Path | None = None
    log_file: Path | None = None

    @property
    def socket_activated(self) -> bool:
        return self.listen_socket is not None

    @classmethod
    def from_environment(
        cls,
        environ: MutableMapping[str, str],
        *,
        record_path: Path | None = None,
        log_file: Path | None = None,
    ) -> ServiceContext:
        notifier = Notifier(environ.pop("NOTIFY_SOCKET", None))
        return cls(
            notifier=notifier,
            listen_socket=take_listen_socket(environ),
            record_path=record_path,
            log_file=log_file,
        )

    def inherited_path(self) -> Path | None:
        if self.listen_socket is None:
            return None
        return Path(self.listen_socket.getsockname())


def write_record(path: Path, record: Mapping[str, Any]) -> None:
    """Write the record as JSON through a private temporary file and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    temp = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(dict(record), out, indent=2)
            out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        temp.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise


def remove_record(path: Path, pid: int) -> bool:
    """Remove the record if it names `pid`; another daemon's record is left alone.

    Never raises: it runs when a stop begins (in the signal handler among
    others), and a record that cannot be removed (a read-only state folder)
    must not stop the daemon from stopping. Clients see the stale record as
    naming a pid that is gone, and the next daemon replaces it.
    """
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    if not isinstance(record, dict) or record.get("pid") != pid:
        return False
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    except OSError as exc:
        log.warning("could not remove the discovery record %s: %s", path, exc.strerror or exc)
        return False
    return True
