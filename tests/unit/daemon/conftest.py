"""Fixtures shared by the daemon's unit tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """HOME (where user skills are looked for) is the harness's own home (`TurnHarness`)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
