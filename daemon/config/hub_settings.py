"""The `hub` section of the global configuration: the team's PostgreSQL database.

Without it nothing changes: sessions live in the embedded SQLite store alone.
With it the daemon joins the hub as a runner (docs/team.md): `url` is a
libpq connection string or URI, `name` the hub's name as people say it,
`password_env` a variable and `password_file` a file holding the password
(libpq's own `~/.pgpass` and `PGPASSWORD` work too), `person` who answers at
this machine (default `user@host`), `runner` what this machine offers the
queue (`slots`, `repos` it accepts: URLs, or `"*"` for any; `push` whether it
pushes result branches; `name`, default the host's name) and `approvers` the
people besides the runner's own who may answer its sessions' approvals.

The whole section is a user-only key (`protocol.config_files.USER_ONLY_KEYS`):
a project file can never point the daemon at a database. A bad value is
reported naming its file and key; a section without a usable `url` is off.
"""

from __future__ import annotations

import getpass
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from coding_harness.daemon.config.profiles import OriginOf, bad

DEFAULT_LEASE_SECONDS = 30.0
ANY_REPO = "*"


@dataclass(frozen=True, kw_only=True, slots=True)
class RunnerSettings:
    name: str
    slots: int = 0
    repos: tuple[str, ...] = ()
    push: bool = False
    lease_seconds: float = DEFAULT_LEASE_SECONDS

    def accepts(self, repo: str) -> bool:
        return ANY_REPO in self.repos or repo in self.repos


@dataclass(frozen=True, kw_only=True, slots=True)
class HubSettings:
    url: str
    name: str
    person: str
    runner: RunnerSettings
    password_env: str | None = None
    password_file: str | None = None
    approvers: tuple[str, ...] = field(default=())

    def may_approve(self, person: str) -> bool:
        """Whether `person` may answer this runner's approvals (its own person always may)."""
        return person == self.person or person in self.approvers


def default_person() -> str:
    return f"{getpass.getuser()}@{socket.gethostname()}"


def parse_hub(raw: Any, origin_of: OriginOf, problems: list[str]) -> HubSettings | None:
    """The hub the global file names, or None (no section, or one that cannot be used)."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        problems.append(f"{bad(origin_of, ('hub',), 'must be an object')}; the hub is off")
        return None
    url = raw.get("url")
    if not isinstance(url, str) or not url.strip():
        rule = "must be a PostgreSQL connection string (postgresql://...)"
        problems.append(f"{bad(origin_of, ('hub', 'url'), rule)}; the hub is off")
        return None
    host = socket.gethostname()
    return HubSettings(
        url=url.strip(),
        name=_text(raw, "name", origin_of, problems) or "hub",
        person=_text(raw, "person", origin_of, problems) or default_person(),
        password_env=_text(raw, "password_env", origin_of, problems),
        password_file=_text(raw, "password_file", origin_of, problems),
        approvers=_texts(raw.get("approvers"), ("hub", "approvers"), origin_of, problems),
        runner=_runner(raw.get("runner"), host, origin_of, problems),
    )


def _runner(raw: Any, host: str, origin_of: OriginOf, problems: list[str]) -> RunnerSettings:
    if raw is None:
        return RunnerSettings(name=host)
    if not isinstance(raw, Mapping):
        problems.append(f"{bad(origin_of, ('hub', 'runner'), 'must be an object')}; no slots")
        return RunnerSettings(name=host)
    values: dict[str, Any] = {"name": host}
    name = raw.get("name")
    if isinstance(name, str) and name.strip():
        values["name"] = name.strip()
    elif name is not None:
        problems.append(f"{bad(origin_of, ('hub', 'runner', 'name'), 'must be a name')}")
    slots = raw.get("slots")
    if isinstance(slots, int) and not isinstance(slots, bool) and 0 <= slots <= 64:
        values["slots"] = slots
    elif slots is not None:
        rule = "must be a whole number from 0 to 64"
        problems.append(f"{bad(origin_of, ('hub', 'runner', 'slots'), rule)}; 0 was used")
    values["repos"] = _texts(raw.get("repos"), ("hub", "runner", "repos"), origin_of, problems)
    push = raw.get("push")
    if isinstance(push, bool):
        values["push"] = push
    elif push is not None:
        problems.append(f"{bad(origin_of, ('hub', 'runner', 'push'), 'must be true or false')}")
    lease = raw.get("lease_seconds")
    if isinstance(lease, int | float) and not isinstance(lease, bool) and 2 <= lease <= 3600:
        values["lease_seconds"] = float(lease)
    elif lease is not None:
        rule = "must be a number of seconds from 2 to 3600"
        problems.append(f"{bad(origin_of, ('hub', 'runner', 'lease_seconds'), rule)}")
    return RunnerSettings(**values)


def _text(raw: Mapping[str, Any], key: str, origin_of: OriginOf, problems: list[str]) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, str) and value.strip():
        return value.strip()
    problems.append(f"{bad(origin_of, ('hub', key), 'must be a non-empty string')}; ignored")
    return None


def _texts(
    value: Any, path: tuple[str, ...], origin_of: OriginOf, problems: list[str]
) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value):
        return tuple(v.strip() for v in value)
    problems.append(f"{bad(origin_of, path, 'must be a list of strings')}; none were used")
    return ()
