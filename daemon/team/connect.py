"""Reaching the hub's database: the connection string, the password, the wait.

The URL is libpq's (a URI or key=value string), so TLS (`sslmode`,
`sslrootcert`), `~/.pgpass`, `PGPASSWORD` and service files work as for every
PostgreSQL tool. `password_env` and `password_file` add a password the URL does
not carry, never logged: `describe` names the hub without it. Every connection
is in autocommit mode (each statement or explicit transaction commits on its
own), names itself `harnessd RUNNER` to the server and gives up connecting after
`CONNECT_TIMEOUT_SECONDS`, so a hub that is away is noticed, not waited on.
"""

from __future__ import annotations

import os
from pathlib import Path

import psycopg
from psycopg import conninfo

from coding_harness.daemon.config.hub_settings import HubSettings

CONNECT_TIMEOUT_SECONDS = 5


class HubUnreachable(Exception):
    """The hub's database cannot be reached now; the message says where and why."""


def connection_string(hub: HubSettings) -> str:
    """The libpq connection string for `hub`, its password added when configured."""
    extra: dict[str, str | int] = {"connect_timeout": CONNECT_TIMEOUT_SECONDS}
    password = _password(hub)
    if password is not None:
        extra["password"] = password
    extra["application_name"] = f"harnessd {hub.runner.name}"[:63]
    return conninfo.make_conninfo(hub.url, **extra)


def describe(hub: HubSettings) -> str:
    """The hub for people: its name, database and host, never a password."""
    try:
        info = conninfo.conninfo_to_dict(hub.url)
    except psycopg.ProgrammingError:
        return f"hub {hub.name} (an invalid url)"
    where = info.get("host") or "the default socket"
    return f"hub {hub.name} (database {info.get('dbname') or '(default)'} on {where})"


def _password(hub: HubSettings) -> str | None:
    if hub.password_env:
        value = os.environ.get(hub.password_env)
        if value:
            return value
    if hub.password_file:
        try:
            text = Path(hub.password_file).expanduser().read_text().strip()
        except OSError:
            return None
        return text or None
    return None


async def open_connection(hub: HubSettings) -> psycopg.AsyncConnection[tuple[object, ...]]:
    """A new autocommit connection to the hub, or HubUnreachable with the reason."""
    try:
        return await psycopg.AsyncConnection.connect(connection_string(hub), autocommit=True)
    except (psycopg.OperationalError, psycopg.ProgrammingError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise HubUnreachable(f"cannot reach {describe(hub)}: {reason}") from None
