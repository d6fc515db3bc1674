"""Reading a workspace file for a checkpoint: no symlink followed, no FIFO waited on,
no size trusted, no folder that leads out."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from coding_harness.daemon.store.checkpoints import read_state
from coding_harness.daemon.store.workspace_read import NotReadable, TooLarge, read_regular


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "w").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "id_rsa").write_text("secret")
    return tmp_path / "w"


def test_a_regular_file_is_read_with_its_mode(root: Path) -> None:
    (root / "a.py").write_text("print(1)\n")
    (root / "a.py").chmod(0o640)
    assert read_regular(root, "a.py", 100) == (b"print(1)\n", 0o640)
    assert read_regular(root, "missing/b.py", 100) is None
    assert read_state(root, "missing.py") == (None, None)


def test_a_symlink_is_never_followed_out(root: Path) -> None:
    (root / "key").symlink_to(root.parent / "outside" / "id_rsa")
    (root / "sub").symlink_to(root.parent / "outside")
    with pytest.raises(NotReadable, match="symlink"):
        read_regular(root, "key", 100)
    with pytest.raises(NotReadable, match="leads out"):
        read_regular(root, "sub/id_rsa", 100)
    with pytest.raises(NotReadable, match="leads out"):
        read_regular(root, "../outside/id_rsa", 100)
    with pytest.raises(OSError):
        read_state(root, "key")


def test_a_fifo_is_refused_without_waiting_for_a_writer(root: Path) -> None:
    os.mkfifo(root / "pipe")
    with pytest.raises(NotReadable, match="not a regular file"):
        read_regular(root, "pipe", 100)


def test_the_limit_holds_whatever_size_was_measured_before(root: Path) -> None:
    (root / "grows.bin").write_bytes(b"x" * 101)
    with pytest.raises(TooLarge):
        read_regular(root, "grows.bin", 100)
    found = read_regular(root, "grows.bin", 101)
    assert found is not None and found[0] == b"x" * 101
