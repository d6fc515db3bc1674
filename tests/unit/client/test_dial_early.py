"""A one-shot dials the daemon before it loads the rest, but only for a task given on
the command line: reading standard input may outlast the daemon's wait for an
`initialize` (10 s), which would close the connection under it."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from coding_harness.client import cli
from coding_harness.client.args import parse_oneshot


@pytest.fixture
def listening(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> socket.socket:
    path = tmp_path / "d.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(4)
    monkeypatch.setenv("CODING_HARNESS_SOCKET", str(path))
    return server


@pytest.mark.parametrize(
    ("argv", "dials"),
    [
        (["-q", "-p", "hi"], True),
        (["fix", "the", "tests"], True),
        (["--stdin", "-p", "why"], False),
        (["-q"], False),  # the task comes from standard input
    ],
)
def test_only_a_task_on_the_command_line_dials_early(
    listening: socket.socket, argv: list[str], dials: bool
) -> None:
    early = cli._dial_early(parse_oneshot(argv))
    try:
        assert (early is not None) is dials
    finally:
        if early is not None:
            early.close()
        listening.close()


def test_no_daemon_means_no_early_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODING_HARNESS_SOCKET", str(tmp_path / "none.sock"))
    assert cli._dial_early(parse_oneshot(["-p", "hi"])) is None
