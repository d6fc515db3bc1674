"""`harness daemon status`: a line per code index, none from an older daemon, and the
arguments `status` takes."""

from __future__ import annotations

import pytest

from coding_harness.client.service import daemon_control
from coding_harness.client.service.daemon_status import status_lines
from coding_harness.protocol import exit_codes

INFO = {"pid": 41, "version": "0.1.0", "uptime": 65.0, "socket": "/run/h.sock"}


def index_rows(info: dict[str, object]) -> list[str]:
    return [line for line in status_lines(info) if line.startswith("index ")]


def test_a_line_per_index() -> None:
    indexes = [
        {"root": "/src/app", "state": "ready", "files": 9812, "seconds": 4.2, "error": None},
        {
            "root": "/src/big",
            "state": "building",
            "files": 0,
            "done": 3000,
            "total": 10000,
            "seconds": 12.0,
            "error": None,
        },
        {"root": "/src/odd", "state": "failed", "files": 0, "seconds": 0.5, "error": "disk full"},
        "not an index",
    ]
    assert index_rows({**INFO, "indexes": indexes}) == [
        "index     /src/app  ready, 9,812 files, 4.2 s",
        "index     /src/big  building, 3,000 of 10,000 files, 12.0 s so far",
        "index     /src/odd  failed after 0.5 s: disk full",
    ]


def test_no_index_yet_and_an_older_daemon() -> None:
    assert index_rows({**INFO, "indexes": []}) == [
        "index     none yet (built for a session's folder)"
    ]
    assert index_rows(INFO) == []  # an older daemon sends no `indexes`: no line at all


@pytest.mark.parametrize("rest", [["--jsn"], ["--json", "--json"], ["-j"]])
def test_status_takes_json_and_nothing_else(
    rest: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert daemon_control.main(["status", *rest]) == exit_codes.BAD_ARGUMENTS
    assert "harness daemon status --json" in capsys.readouterr().err
