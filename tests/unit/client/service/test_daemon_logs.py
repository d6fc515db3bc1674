"""`harness daemon logs`: the tail reaches into rotated files; bad options exit 5."""

from __future__ import annotations

from pathlib import Path

import pytest

from coding_harness.client.service import daemon_logs


def write_lines(path: Path, first: int, last: int) -> None:
    path.write_bytes(b"".join(f"line {n}\n".encode() for n in range(first, last + 1)))


def test_tail_of_the_current_file(tmp_path: Path) -> None:
    log = tmp_path / "daemon.log"
    write_lines(log, 1, 500)
    assert daemon_logs.tail(log, 3) == [b"line 498\n", b"line 499\n", b"line 500\n"]
    assert daemon_logs.tail(log, 0) == []
    assert len(daemon_logs.tail(log, 1000)) == 500


def test_tail_reaches_into_rotated_files_in_order(tmp_path: Path) -> None:
    log = tmp_path / "daemon.log"
    write_lines(tmp_path / "daemon.log.2", 1, 3)
    write_lines(tmp_path / "daemon.log.1", 4, 6)
    write_lines(log, 7, 8)
    assert daemon_logs.tail(log, 5) == [f"line {n}\n".encode() for n in range(4, 9)]
    assert daemon_logs.tail(log, 50)[0] == b"line 1\n"


def test_tail_of_a_long_file_reads_only_its_end(tmp_path: Path) -> None:
    log = tmp_path / "daemon.log"
    log.write_bytes(b"x" * 300_000 + b"\nlast one\n")
    assert daemon_logs.tail(log, 1) == [b"last one\n"]
    log.write_bytes(b"no newline at the end")
    assert daemon_logs.tail(log, 1) == [b"no newline at the end\n"]


@pytest.mark.parametrize("argv", [["-n", "x"], ["-n", "-2"], ["--nope"], ["extra"]])
def test_bad_options_exit_5(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert daemon_logs.main(argv) == 5
    assert "harness daemon logs" in capsys.readouterr().err
