"""A real PostgreSQL server for the hub's tests: Debian's `postgresql`, in a temporary folder.

`PostgresServer` runs `initdb` and `pg_ctl` into a folder of its own, listening on
a Unix socket only (no TCP port), with trust authentication for its superuser
`hub`, fsync off (a test's data need not survive a power cut). As root (CI), the
server runs as the `postgres` account the package made, since PostgreSQL refuses to
run as root. One server serves a pytest worker; each test takes a database of its
own (`fresh_database`). `restart`, `stop` and `start` are for the tests of a hub that
goes away. Where no PostgreSQL is installed `find_binaries` returns None and the
tests skip, saying so (`.ci/run` installs it).
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

SUPERUSER = "hub"
_names = itertools.count(1)


def find_binaries() -> Path | None:
    """The folder holding initdb and pg_ctl, or None when PostgreSQL's server is absent."""
    for folder in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (folder / "initdb").exists() and (folder / "pg_ctl").exists():
            return folder
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).parent
    return None


def why_absent() -> str:
    return "PostgreSQL's server (initdb, pg_ctl) is not installed: apt-get install postgresql"


class PostgresServer:
    def __init__(self, binaries: Path) -> None:
        self.binaries = binaries
        self.root = Path(tempfile.mkdtemp(prefix="chpg-", dir="/tmp"))
        self.data = self.root / "data"
        self.socket_dir = self.root
        self.log = self.root / "server.log"
        self._as_postgres = os.geteuid() == 0

    def _run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = list(argv)
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        return subprocess.run(command, capture_output=True, text=True, check=check, timeout=60)

    def init(self) -> PostgresServer:
        if self._as_postgres:
            shutil.chown(self.root, "postgres", "postgres")
        self._run(
            str(self.binaries / "initdb"),
            "-D",
            str(self.data),
            "-U",
            SUPERUSER,
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--no-sync",
        )
        return self

    def start(self) -> None:
        options = (
            f"-c listen_addresses='' -c unix_socket_directories={self.socket_dir}"
            " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
            " -c max_connections=200"
        )
        self._run(
            str(self.binaries / "pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.log),
            "-w",
            "-t",
            "30",
            "start",
        )

    def stop(self, mode: str = "fast") -> None:
        self._run(
            str(self.binaries / "pg_ctl"),
            "-D",
            str(self.data),
            "-m",
            mode,
            "-w",
            "stop",
            check=False,
        )

    def restart(self) -> None:
        self.stop()
        self.start()

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@/{database}?host={self.socket_dir}"

    def psql(self, sql: str, database: str = "postgres") -> str:
        """Run `sql` in `database` (a name or a URL); psql's unaligned output."""
        target = database if database.startswith("postgresql:") else self.url(database)
        done = subprocess.run(
            [
                self._psql(),
                "-X",
                "-q",
                "-At",
                "-v",
                "ON_ERROR_STOP=1",
                "-d",
                target,
                "-c",
                sql,
            ],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        return done.stdout

    def _psql(self) -> str:
        own = self.binaries / "psql"
        return str(own) if own.exists() else "psql"

    def fresh_database(self) -> str:
        """A new empty database; its URL."""
        name = f"hub_{os.getpid()}_{next(_names)}"
        self.psql(f"CREATE DATABASE {name}")
        return self.url(name)

    def close(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)


def start_server() -> PostgresServer | None:
    binaries = find_binaries()
    if binaries is None:
        return None
    server = PostgresServer(binaries).init()
    server.start()
    return server
