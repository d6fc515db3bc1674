"""The config tests' folders: an empty home and an empty project beside it."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    """(home, project), both empty."""
    home, cwd = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    cwd.mkdir()
    return home, cwd
