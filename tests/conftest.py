"""What every test runs under.

No connection leaves this machine (`tests/support/netguard.py`), and every test
under tests/integration/, which start real daemons, clients and servers, carries
the `integration` marker: `pytest -m "not integration"` runs the unit suite alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import netguard

INTEGRATION = Path(__file__).parent / "integration"

netguard.install()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if INTEGRATION in item.path.parents:
            item.add_marker(pytest.mark.integration)
