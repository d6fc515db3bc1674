"""What every test runs under: no connection leaves this machine."""

from __future__ import annotations

from tests.support import netguard

netguard.install()
