"""Loads tests/support/netguard.py into a Python process a test started."""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "_test_netguard", Path(__file__).resolve().parent.parent / "netguard.py"
)
if _spec is not None and _spec.loader is not None:
    _guard = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_guard)
    _guard.install()
