"""What every test runs under.

No connection leaves this machine (`tests/support/netguard.py`), and every test
under tests/integration/, which start real daemons, clients and servers, carries
the `integration` marker: `pytest -m "not integration"` runs the unit suite alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import netguard
from tests.support.postgres import PostgresServer, start_server, why_absent

INTEGRATION = Path(__file__).parent / "integration"

netguard.install()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if INTEGRATION in item.path.parents:
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A real PostgreSQL server for this worker (tests/support/postgres.py), or a skip."""
    server = start_server()
    if server is None:
        pytest.skip(why_absent())
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def hub_url(postgres: PostgresServer) -> str:
    """A fresh, empty database on the worker's PostgreSQL server."""
    return postgres.fresh_database()
