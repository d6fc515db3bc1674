"""Fixtures the tool tests share: a fake `uv` that records how it was run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def uv_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake `uv` first on PATH; each run appends its arguments to the returned file."""
    log = tmp_path / "uv-ran.log"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "uv"
    fake.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{log}'\necho fake uv ran\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    return log
