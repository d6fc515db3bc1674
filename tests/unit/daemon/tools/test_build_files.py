"""What the build-files guard reads: included files, globs, hidden includes by digest,
and never a FIFO (reading one would block the turn)."""

from __future__ import annotations

import os
from pathlib import Path

from coding_harness.daemon.tools.build_files import HIDDEN, included_files, read_build_files


def test_includes_are_followed_through_globs_and_nested_files(tmp_path: Path) -> None:
    (tmp_path / "mk").mkdir()
    (tmp_path / "Makefile").write_text("include mk/*.mk\ncheck:\n\t@true\n")
    (tmp_path / "mk" / "a.mk").write_text("include mk/deeper.inc\n")
    (tmp_path / "mk" / "deeper.inc").write_text("X = 1\n")
    assert included_files(tmp_path) == {"mk/a.mk", "mk/deeper.inc"}


def test_a_hidden_include_is_noted_by_digest_and_a_fifo_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text("-include .env\n-include .pipe\ncheck:\n\t@true\n")
    (tmp_path / ".env").write_text("TOKEN=abc\n")
    os.mkfifo(tmp_path / ".pipe")
    before = read_build_files(tmp_path)
    held = before[".env"]
    assert held is not None and held.startswith(HIDDEN) and b"abc" not in held
    assert before[".pipe"] is None
    (tmp_path / ".env").write_text("TOKEN=xyz\n")
    assert read_build_files(tmp_path)[".env"] != held
