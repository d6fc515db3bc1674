"""Fixtures the socket server's tests share: a short socket path in a private folder."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def socket_path() -> Iterator[Path]:
    """A socket path short enough for AF_UNIX (under /tmp), removed afterwards."""
    root = Path(tempfile.mkdtemp(prefix="chu-", dir="/tmp"))
    try:
        yield root / "run" / "s.sock"
    finally:
        shutil.rmtree(root, ignore_errors=True)
