"""A request connection that outlives the daemon it first reached.

The REPL sends its requests (tasks, answers, slash commands) on a connection of
their own. After the daemon restarted or crashed, that connection is dead, and
nothing reads it to notice; the next request then reconnects
(`launcher.redial`, which starts a daemon when none answers) and goes out on
the new connection, once. A request that never reached the daemon (the send
failed, or a stopping daemon refused it with `ShuttingDown`) is sent again; one
the daemon may have taken before it went away is sent again only when doing it
twice does no harm, which a task does not (it would run twice): `MaybeLost`
says so, and the caller tells the user.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from coding_harness.client.session.launcher import RECONNECT_SECONDS, redial
from coding_harness.protocol import errors, methods
from coding_harness.protocol.client import (
    Connection,
    DaemonUnreachable,
    ProtocolViolation,
    retry_delay,
)
from coding_harness.protocol.dial import dial

# Requests never sent twice: the daemon may have taken the first before it went away.
_ONCE = frozenset({methods.SESSION_SUBMIT})


class MaybeLost(DaemonUnreachable):
    """The connection was lost after the request went out: it may or may not have been
    taken, and it is not one to send twice."""


class LastingConnection(Connection):
    def __init__(self, path: Path, client: tuple[str, str]) -> None:
        """Connected and introduced as `client` (name, version); DaemonUnreachable if not."""
        super().__init__(dial(path), path)
        self.client = client
        try:
            self.initialize(*client)
        except BaseException:
            self.close()
            raise

    def request(
        self, method: str, params: dict[str, Any] | None = None, timeout: float | None = 30.0
    ) -> Any:
        """As `Connection.request`, over a new connection when the daemon was lost."""
        deadline = time.monotonic() + RECONNECT_SECONDS
        attempt = 0
        while True:
            attempt += 1
            try:
                request_id = self.send_request(method, params)
            except DaemonUnreachable as exc:  # it never reached the daemon
                self._redial(exc)
                continue
            try:
                return self.response(request_id, timeout, method)
            except errors.ShuttingDown as exc:  # refused, untaken: the next daemon takes it
                delay = retry_delay(attempt + 2)
                if time.monotonic() + delay > deadline:
                    raise
                time.sleep(delay)
                self._redial(DaemonUnreachable(exc.message))
            except DaemonUnreachable as exc:
                if self.broken is None:  # no answer in time: the connection itself is fine
                    raise
                if method in _ONCE:
                    self._redial(exc)
                    raise MaybeLost(
                        f"{exc}; reconnected, but the daemon may not have taken it"
                    ) from exc
                self._redial(exc)

    def _redial(self, cause: DaemonUnreachable) -> None:
        """Carry on over a new connection; `cause` (with why not) when none can be had."""
        if isinstance(cause, ProtocolViolation):
            raise cause
        try:
            fresh = redial(self.path, lambda conn: conn.initialize(*self.client))
        except DaemonUnreachable as exc:
            raise DaemonUnreachable(f"{cause}; could not reconnect: {exc}") from exc
        self.take_over(fresh)
