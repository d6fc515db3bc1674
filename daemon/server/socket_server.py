"""The Unix socket: one daemon per path, private permissions, framed I/O.

`SocketServer.start` takes an exclusive lock beside the socket before binding,
so a second daemon stops with "already running (pid N)" and never unlinks a
live socket; a stale socket (nothing answers) is replaced. Under socket
activation `start` serves the socket systemd passed instead: systemd bound it
and owns its path, so there is no lock to take and `close` never unlinks it.
Each connection's peer uid is checked; bytes are framed into messages and
handed to the JSON-RPC endpoint; responses and events go out through the
`Connection`. A connection must send `initialize` within `init_timeout`
(10 s) and finish each message within `message_timeout` (60 s) of its first
byte, an over-long one being discarded included, or it is closed; so silent
or trickling peers cannot hold the connection slots. The cap on connections
leaves file descriptors for the daemon's own work when the limit is low.
A client's response settles the request the daemon sent it (`Connection.ask`);
one nobody waits for is dropped, never answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import resource
import socket
import struct
from collections.abc import Callable
from pathlib import Path

from coding_harness.daemon.server.asks import as_response
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.server.pid_lock import LockHeld, take_pid_lock
from coding_harness.daemon.server.rpc import Deferred, Endpoint, error_response
from coding_harness.protocol import errors
from coding_harness.protocol.framing import MAX_MESSAGE_BYTES, LineDecoder, Oversized, encode
from coding_harness.protocol.paths import (
    check_socket_file,
    check_socket_path_length,
    ensure_private_dir,
)

log = logging.getLogger(__name__)

# A message must end within this many seconds of its first byte.
PARTIAL_MESSAGE_TIMEOUT = 60.0
# A connection must send `initialize` within this many seconds of connecting.
INIT_TIMEOUT = 10.0
# Past this many open connections a new one is told so and closed, which keeps
# file descriptors for the clients already attached.
MAX_CONNECTIONS = 512
# File descriptors kept for the store, the log, provider connections and tool
# processes when RLIMIT_NOFILE is low.
FD_RESERVE = 32
READ_CHUNK = 65536


class AlreadyRunning(Exception):
    pass


def _nothing() -> None:
    pass


class SocketServer:
    def __init__(
        self,
        path: Path,
        endpoint: Endpoint,
        *,
        max_message: int = MAX_MESSAGE_BYTES,
        classify_peer: Callable[[int | None], bool] = lambda pid: False,
        on_disconnect: Callable[[Connection], None] = lambda conn: None,
    ) -> None:
        self.path = path
        self._endpoint = endpoint
        self._max_message = max_message
        self._classify_peer = classify_peer
        self._on_disconnect = on_disconnect
        self._lock_fd: int | None = None
        self._server: asyncio.AbstractServer | None = None
        self._inode: int | None = None
        self.connections: set[Connection] = set()
        self.max_connections = connection_cap()
        self.init_timeout = INIT_TIMEOUT
        self.message_timeout = PARTIAL_MESSAGE_TIMEOUT

    # -- lifecycle -------------------------------------------------------
    async def start(
        self, inherited: socket.socket | None = None, *, on_bound: Callable[[], None] = _nothing
    ) -> None:
        """Bind (behind the lock) and listen, or serve the `inherited` listening socket.

        `on_bound` runs once the path is ours and before any connection can be
        answered (before `listen`, or before serving an inherited socket), so
        whatever it records is in place by the time a client gets a reply.
        The lock only guards binding: an inherited socket's path belongs to the
        service manager, which already runs one daemon per socket. Taking the
        lock there could only conflict with a daemon started by hand earlier
        that still holds it, and would make systemd restart us in a loop.
        """
        if inherited is None:
            check_socket_path_length(self.path)
            ensure_private_dir(self.path.parent)
            self._take_lock()
            sock = self._bind(on_bound)
        else:
            on_bound()
            sock = inherited
        self._server = await asyncio.start_unix_server(self._serve_client, sock=sock)

    def _take_lock(self) -> None:
        try:
            self._lock_fd = take_pid_lock(self.path.with_name(self.path.name + ".lock"))
        except LockHeld as held:
            raise AlreadyRunning(
                f"a daemon is already running on {self.path} (pid {held.owner})"
            ) from None

    def _bind(self, on_bound: Callable[[], None]) -> socket.socket:
        if self.path.exists() or self.path.is_symlink():
            if _answers(self.path):
                raise AlreadyRunning(f"another process is serving on {self.path}")
            check_socket_file(self.path)  # a stale socket may go; a file or folder may not
            log.info("replacing stale socket %s", self.path)
            self.path.unlink()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_umask = os.umask(0o177)
        try:
            sock.bind(os.fspath(self.path))
        finally:
            os.umask(old_umask)
        self.path.chmod(0o600)
        self._inode = self.path.stat().st_ino
        on_bound()
        sock.listen(128)
        sock.setblocking(False)
        return sock

    def path_is_ours(self) -> bool:
        """Whether the socket path still names the socket this daemon bound.

        True under socket activation (the path is systemd's to manage).
        """
        if self._inode is None:
            return True
        try:
            return self.path.stat().st_ino == self._inode
        except OSError:
            return False

    async def close(self) -> None:
        """Stop listening, flush and close connections, unlink the socket if we bound it."""
        if self._server is not None:
            self._server.close()
        await asyncio.gather(*(conn.finish() for conn in list(self.connections)))
        if self._inode is not None:
            with contextlib.suppress(OSError):
                if self.path.stat().st_ino == self._inode:
                    self.path.unlink()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    # -- connections -----------------------------------------------------
    async def _serve_client(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        pid, uid = peer_credentials(writer.get_extra_info("socket"))
        if uid is not None and uid != os.getuid():
            log.warning("refused connection: peer uid %s != %s", uid, os.getuid())
            writer.close()
            return
        if len(self.connections) >= self.max_connections:
            await _refuse_busy(writer, self.max_connections)
            return
        conn = Connection(writer, peer_pid=pid, max_message=self._max_message)
        conn.is_tool_descendant = self._classify_peer(pid)
        self.connections.add(conn)
        log.debug("%s connected", conn.label)
        try:
            await self._read_loop(reader, conn)
        except (ConnectionError, OSError) as exc:
            log.debug("%s: %s", conn.label, exc)
        finally:
            self.connections.discard(conn)
            self._on_disconnect(conn)
            await conn.finish()
            log.debug("%s disconnected", conn.label)

    async def _read_loop(self, reader: asyncio.StreamReader, conn: Connection) -> None:
        decoder = LineDecoder(self._max_message)
        clock = asyncio.get_running_loop().time
        init_deadline = clock() + self.init_timeout
        message_deadline: float | None = None
        while not conn.closed.is_set():
            deadline = message_deadline
            if not conn.initialized:
                deadline = min(init_deadline, deadline or init_deadline)
            try:
                timeout = None if deadline is None else max(0.0, deadline - clock())
                data = await asyncio.wait_for(reader.read(READ_CHUNK), timeout)
            except TimeoutError:
                self._timed_out(conn)
                return
            if not data:
                return
            ended = decoder.ended
            for line in decoder.feed(data):
                await self._handle_line(line, conn)
            if not decoder.in_message:
                message_deadline = None
            elif message_deadline is None or decoder.ended != ended:
                message_deadline = clock() + self.message_timeout

    async def _handle_line(self, line: bytes | Oversized, conn: Connection) -> None:
        if isinstance(line, Oversized):
            limit = errors.MessageTooLarge(
                f"message larger than {self._max_message} bytes; it was discarded"
            )
            conn.send(error_response(limit))
            return
        if (conn.asking or _METHOD_KEY not in line) and _took_answer(line, conn):
            return
        response = await self._endpoint.handle(line, conn)
        conn.run_on_answer()  # before the answer is written: see `Connection.on_answer`
        if isinstance(response, Deferred):
            conn.answer_later(response.answer)
        elif response is not None:
            conn.send(response)

    def _timed_out(self, conn: Connection) -> None:
        if not conn.initialized:
            log.info("%s: no initialize within %.0f s; closing", conn.label, self.init_timeout)
            late = errors.NotInitialized(
                f"no initialize within {self.init_timeout:.0f} s of connecting; closing"
            )
            conn.send(error_response(late))
        else:
            log.info(
                "%s: a message unfinished %.0f s after its first byte; closing",
                conn.label,
                self.message_timeout,
            )


# Every request carries these bytes (its "method" member); a line without them is
# never one, so only such a line, or any line while the daemon waits on the
# connection, is looked at as a possible response.
_METHOD_KEY = b'"method"'


def _took_answer(line: bytes, conn: Connection) -> bool:
    """Whether `line` is a response from the client, handed to the ask it answers
    (or dropped when none waits for it)."""
    response = as_response(line)
    if response is None:
        return False
    if not conn.answer(response):
        log.debug(
            "%s: dropped a response to %r, which nothing waits for", conn.label, response["id"]
        )
    return True


def connection_cap(limit: int = MAX_CONNECTIONS) -> int:
    """`limit`, or fewer when RLIMIT_NOFILE would not leave `FD_RESERVE` descriptors."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return limit
    return max(1, min(limit, soft - FD_RESERVE))


async def _refuse_busy(writer: asyncio.StreamWriter, limit: int) -> None:
    log.warning("refused a connection: %d connections are open already", limit)
    busy = errors.ServerBusy(
        f"the daemon already serves {limit} connections; close some clients and retry"
    )
    writer.write(encode(error_response(busy)))
    with contextlib.suppress(ConnectionError, OSError):
        await asyncio.wait_for(writer.drain(), timeout=1)
    writer.close()


def peer_credentials(sock: socket.socket | None) -> tuple[int | None, int | None]:
    """(pid, uid) of the peer via SO_PEERCRED, or (None, None) where unsupported."""
    option = getattr(socket, "SO_PEERCRED", None)
    if sock is None or option is None:
        return None, None
    raw = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    pid, uid, _gid = struct.unpack("3i", raw)
    return pid, uid


def _answers(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(os.fspath(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True
