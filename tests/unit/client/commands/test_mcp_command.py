"""`harness mcp list|restart`: arguments, what each answer prints and its exit code.

The daemon side is faked by a small connection that answers as docs/protocol.md
says; tests/integration/test_mcp_commands.py runs the real daemon and server.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from coding_harness.client.commands import mcp
from coding_harness.protocol import errors
from coding_harness.protocol.client import DaemonUnreachable

SERVER = {"name": "time", "state": "ready", "pid": 7, "tools": ["get_current_time"]}


class FakeDaemon:
    """Answers `mcp.*` requests from a script and records them."""

    def __init__(self, answer: dict[str, Any] | errors.RpcError) -> None:
        self.answer = answer
        self.requests: list[tuple[str, dict[str, Any]]] = []

    def __enter__(self) -> FakeDaemon:
        return self

    def __exit__(self, *_: object) -> None:
        return None

    def initialize(self, *_: object, **__: object) -> dict[str, Any]:
        return {}

    def request(self, method: str, params: dict[str, Any], timeout: float = 30.0) -> Any:
        self.requests.append((method, params))
        if isinstance(self.answer, errors.RpcError):
            raise self.answer
        return self.answer


@pytest.fixture
def daemon(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[FakeDaemon]:
    """Each `harness mcp` run here talks to the next FakeDaemon put in the list."""
    monkeypatch.chdir(tmp_path)
    queue: list[FakeDaemon] = []
    monkeypatch.setattr(mcp, "connect_or_start", lambda _path: queue.pop(0))
    return queue


def test_bad_arguments_exit_5(capsys: pytest.CaptureFixture[str]) -> None:
    assert mcp.main([]) == 5
    assert mcp.main(["restart"]) == 5
    assert mcp.main(["stop", "time"]) == 5
    assert mcp.main(["list", "--yaml"]) == 5
    assert mcp.main(["--help"]) == 0
    assert "list|restart" in capsys.readouterr().out


def test_list_sends_the_real_folder_and_prints_the_table_or_json(
    daemon: list[FakeDaemon], capsys: pytest.CaptureFixture[str]
) -> None:
    fake = FakeDaemon({"servers": [SERVER]})
    daemon.append(fake)
    assert mcp.main(["list"]) == 0
    assert fake.requests == [("mcp.list", {"cwd": os.path.realpath(os.getcwd())})]  # noqa: PTH109
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["NAME", "STATE", "PID", "TOOLS", "STARTED", "ERROR"]
    assert out.splitlines()[1].split()[:5] == ["time", "ready", "7", "1:", "get_current_time"]
    daemon.append(FakeDaemon({"servers": [SERVER]}))
    assert mcp.main(["list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"servers": [SERVER]}
    daemon.append(FakeDaemon({"servers": []}))
    assert mcp.main(["list"]) == 0
    assert "no MCP servers configured" in capsys.readouterr().out


def test_restart_exits_0_when_ready_1_when_failed_5_for_an_unknown_name(
    daemon: list[FakeDaemon], capsys: pytest.CaptureFixture[str]
) -> None:
    fake = FakeDaemon({"server": SERVER})
    daemon.append(fake)
    assert mcp.main(["restart", "time"]) == 0
    assert fake.requests[0][0] == "mcp.restart" and fake.requests[0][1]["name"] == "time"
    assert capsys.readouterr().out == "time: ready (pid 7, 1 tool)\n"
    failed = {**SERVER, "state": "failed", "pid": None, "error": "exited with code 2"}
    daemon.append(FakeDaemon({"server": failed}))
    assert mcp.main(["restart", "time"]) == 1
    assert capsys.readouterr().out == "time: failed: exited with code 2\n"
    unknown = errors.InvalidParams("no MCP server 'tyme'; configured: time, web")
    daemon.append(FakeDaemon(unknown))
    assert mcp.main(["restart", "tyme"]) == 5
    assert "harness mcp: no MCP server 'tyme'; configured: time, web" in capsys.readouterr().err


def test_no_daemon_exits_4_and_an_old_daemon_names_the_fix(
    daemon: list[FakeDaemon], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    daemon.append(FakeDaemon(errors.MethodNotFound("Method not found: mcp.list")))
    assert mcp.main(["list"]) == 1
    assert "restart it: harness daemon restart" in capsys.readouterr().err

    def unreachable(_path: Path) -> FakeDaemon:
        raise DaemonUnreachable("no daemon at /tmp/x.sock")

    monkeypatch.setattr(mcp, "connect_or_start", unreachable)
    assert mcp.main(["list"]) == 4
    assert "cannot reach the daemon: no daemon at /tmp/x.sock" in capsys.readouterr().err


def test_a_terminal_gets_colors_unless_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    shown = Terminal()
    mcp.show_list({"servers": [SERVER]}, shown)
    assert "\x1b[32mready" in shown.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    plain = Terminal()
    mcp.show_list({"servers": [SERVER]}, plain)
    assert "\x1b[" not in plain.getvalue() and "ready" in plain.getvalue()
