"""`hub.sessions`: the team's sessions, read from the hub (docs/team.md).

`hub.sessions {limit?}` answers `{hub, now, sessions, runners}`: every runner's
sessions as the mirrors wrote them (`daemon/team/mirror.py`), the most recently
active first (at most `limit`, default 200), each with `session`, `short_id`,
`runner`, `person`, `host`, `cwd`, `title`, `state`, `last_activity`,
`last_seq`, `closed`, `task` and `runner_away`; and each runner with its
`seen_at` and `away` (not seen for AWAY_SECONDS: its sessions' state is the last
it wrote). `now` is the hub's clock, so ages read the same on every machine.

A daemon without a hub answers -32600 with `data: {hub: "none"}`; a hub that
cannot be reached, -32021 (`HubUnavailable`) with `data: {hub: "unreachable"}` and the reason.
psycopg and the team modules load only when a hub is configured.
"""

from __future__ import annotations

from typing import Any

from coding_harness.daemon.methods.parts import MethodParts
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.server.rpc import Handler
from coding_harness.protocol import errors
from coding_harness.protocol import methods as m

NO_HUB = (
    "no hub is configured: name your team's PostgreSQL database in the `hub` key of "
    "~/.coding_harness.json (docs/team.md)"
)
# A runner renews its row every 5 s; three missed renewals and it counts as away.
AWAY_SECONDS = 15.0
DEFAULT_LIMIT = 200
MOST = 5000

_SESSIONS = (
    "SELECT s.id, s.runner, s.person, s.host, s.cwd, s.title, s.state, s.last_activity,"
    " s.last_seq, s.closed, s.task, r.seen_at FROM sessions s"
    " LEFT JOIN runners r ON r.name = s.runner ORDER BY s.last_activity DESC LIMIT %s"
)
_RUNNERS = "SELECT name, person, host, seen_at FROM runners ORDER BY name"


async def hub_sessions(parts: MethodParts, conn: Connection, limit: Any = None) -> dict[str, Any]:
    hub = parts.hub()
    if hub is None:
        raise errors.InvalidRequest(NO_HUB, data={"hub": "none"})
    count = _limit(limit)
    from coding_harness.daemon.team.connect import HubUnreachable

    try:
        async with hub.connection() as db:
            clock = await (await db.execute("SELECT extract(epoch FROM now())::float8")).fetchone()
            sessions = await (await db.execute(_SESSIONS, (count,))).fetchall()
            runners = await (await db.execute(_RUNNERS)).fetchall()
    except HubUnreachable as exc:
        raise errors.HubUnavailable(str(exc), data={"hub": "unreachable"}) from None
    now = float(clock[0]) if clock else 0.0
    return {
        "hub": hub.settings.name,
        "now": now,
        "sessions": [_session(row, now) for row in sessions],
        "runners": [
            {
                "name": name,
                "person": person,
                "host": host,
                "seen_at": seen,
                "away": now - float(seen) > AWAY_SECONDS,
            }
            for name, person, host, seen in runners
        ],
    }


def _session(row: tuple[Any, ...], now: float) -> dict[str, Any]:
    sid, runner, person, host, cwd, title, state, active, last_seq, closed, task, seen = row
    return {
        "session": sid,
        "short_id": str(sid).rsplit("-", 1)[-1],
        "runner": runner,
        "person": person,
        "host": host,
        "cwd": cwd,
        "title": title,
        "state": state,
        "last_activity": active,
        "last_seq": last_seq,
        "closed": closed,
        "task": task,
        "runner_away": seen is None or now - float(seen) > AWAY_SECONDS,
    }


def _limit(value: Any) -> int:
    if value is None:
        return DEFAULT_LIMIT
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise errors.InvalidParams("limit must be a whole number of at least 1")
    return min(value, MOST)


HANDLERS: dict[str, Handler] = {m.HUB_SESSIONS: hub_sessions}
# Waits on the hub's database (up to the pool's 5 s when it is away): the connection
# goes on answering meanwhile.
DETACHED = frozenset({m.HUB_SESSIONS})
