"""The REPL's feed of session events, kept up across dropped connections.

An `EventPump` reads the events on a connection of their own. When that
connection drops (the REPL fell too far behind and the daemon cut it off, or
the daemon restarted or crashed), the feed connects again (`launcher.redial`:
starting a daemon when none answers) and attaches with the last `seq` it
handled (`turn_driver.reattach`), so every event is shown once and none is
lost. It gives up, and ends the REPL, when the daemon sent something that is
not JSON-RPC, when showing an event failed, or when no daemon can be had.

An approval request the feed shows starts a `Reminder`: unanswered after
`notify.after_seconds`, the terminal bell rings once and a notice says which
session waits (`client/session/bell.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from coding_harness.client.render.sanitize import field
from coding_harness.client.repl.events import EventPump
from coding_harness.client.session.bell import BellSettings, Reminder, bell_settings
from coding_harness.client.session.launcher import redial
from coding_harness.client.session.turn_driver import reattach
from coding_harness.protocol import errors
from coding_harness.protocol.client import Connection, DaemonUnreachable, ProtocolViolation
from coding_harness.protocol.events import Event
from coding_harness.protocol.methods import EventKind
from coding_harness.protocol.version import __version__

Show = Callable[[Event], None]
Notice = Callable[[str, str], None]


class EventFeed:
    def __init__(
        self,
        conn: Connection,
        session: str,
        *,
        last_seq: int,
        show: Show,
        notice: Notice,
        give_up: Callable[[str], None],
        bell: BellSettings | None = None,
    ) -> None:
        """`bell`: when and whether to ring; default: as the config files of this folder say."""
        self.session = session
        self.last_seq = last_seq
        self._show, self._notice, self._give_up = show, notice, give_up
        self._closing = False
        self.reminder = Reminder(bell or bell_settings(), self._still_waiting)
        self.pump = EventPump(conn, session, self._on_event, self._lost)

    def start(self) -> None:
        self.pump.start()

    def stop(self) -> None:
        self._closing = True
        self.reminder.clear()
        self.pump.stop()
        self.pump.conn.close()

    def _on_event(self, event: Event) -> None:
        self._show(event)
        self.last_seq = max(self.last_seq, event.seq)
        if event.kind == EventKind.APPROVAL_REQUESTED:
            self.reminder.requested(event.data)
        elif event.kind == EventKind.APPROVAL_RESOLVED:
            self.reminder.resolved(event.data.get("request"))
        elif event.kind == EventKind.TURN_FINISHED:
            self.reminder.clear()

    def _still_waiting(self, data: dict[str, Any]) -> None:
        """On the reminder's thread: the request has waited `after_seconds`."""
        what = " ".join(field(str(data.get(key) or "")) for key in ("kind", "path")).strip()
        self._notice(
            f"session {self.session} is waiting for your approval ({what}): answer here "
            f"or with `harness approve {self.session}`",
            "yellow",
        )

    def _lost(self, reason: str) -> None:
        """On the event thread: attach again with `since_seq`, or give up."""
        broken = self.pump.conn.broken
        if self._closing or broken is None or isinstance(broken, ProtocolViolation):
            self._give_up(reason)  # the REPL failed to show an event, or the daemon spoke garbage
            return
        self._notice(f"{reason}; reconnecting", "yellow")
        try:
            conn, result = reattach(self._reopen, self.session, self.last_seq)
        except (DaemonUnreachable, errors.RpcError) as exc:
            self._give_up(f"{reason}; could not reconnect: {exc}")
            return
        lost, self.pump = self.pump, EventPump(conn, self.session, self._on_event, self._lost)
        lost.conn.close()
        self._notice(f"reconnected; {result.get('replayed', 0)} missed events follow", "dim")
        self.pump.start()

    def _reopen(self) -> Connection:
        return redial(
            self.pump.conn.path, lambda conn: conn.initialize("harness-repl", __version__)
        )
