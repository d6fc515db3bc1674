"""`harness daemon install` / `uninstall` in a temporary HOME, with fake service tools."""

from __future__ import annotations

import json
import plistlib
import sys
from pathlib import Path

import pytest

from coding_harness.client.service import service_install, service_units
from tests.support.service import fake_tool


def calls(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    return {
        "HOME": str(home),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_RUNTIME_DIR": str(tmp_path),
        "PATH": str(tmp_path / "bin"),
    }


def test_linux_install_writes_units_for_this_python_and_enables_the_socket(
    env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "systemctl.log"
    fake_tool(tmp_path / "bin", "systemctl", log)
    assert service_install.install(env=env, platform="linux") == 0
    units = Path(env["HOME"]) / ".config" / "systemd" / "user"
    service = (units / "harnessd.service").read_text()
    assert f"ExecStart={sys.executable} -m coding_harness.daemon" in service
    assert f"Environment=XDG_STATE_HOME={env['XDG_STATE_HOME']}" in service
    assert (units / "harnessd.socket").read_text() == service_units.render_socket()
    assert calls(log) == [
        ["--user", "daemon-reload"],
        ["--user", "enable", "--now", "harnessd.socket"],
    ]
    assert "enabled harnessd.socket" in capsys.readouterr().out

    assert service_install.uninstall(env=env, platform="linux") == 0
    assert not (units / "harnessd.service").exists() and not (units / "harnessd.socket").exists()
    assert calls(log)[2:] == [
        ["--user", "disable", "--now", "harnessd.socket", "harnessd.service"],
        ["--user", "daemon-reload"],
    ]


def test_linux_install_without_systemctl_says_what_to_run(
    env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    assert service_install.install(env=env, platform="linux") == 0
    assert (tmp_path / "config" / "systemd" / "user" / "harnessd.service").exists()
    out = capsys.readouterr().out
    assert "systemctl is not on PATH" in out
    assert "systemctl --user enable --now harnessd.socket" in out
    assert service_install.uninstall(env=env, platform="linux") == 0
    assert "systemctl --user disable --now harnessd.socket harnessd.service" in (
        capsys.readouterr().out
    )
    assert service_install.uninstall(env=env, platform="linux") == 0
    assert "nothing to uninstall" in capsys.readouterr().out


def test_a_failing_systemctl_is_reported_with_exit_1(
    env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_tool(tmp_path / "bin", "systemctl", tmp_path / "log", exit_code=1)
    assert service_install.install(env=env, platform="linux") == 1
    err = capsys.readouterr().err
    assert "systemctl --user daemon-reload` failed" in err and "run that command again" in err


def test_clients_using_another_socket_are_pointed_out(
    env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env["CODING_HARNESS_SOCKET"] = str(tmp_path / "elsewhere.sock")
    service_install.install(env=env, platform="linux")
    assert "unset CODING_HARNESS_SOCKET" in capsys.readouterr().out


def test_macos_install_writes_a_plist_and_loads_it(
    env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "launchctl.log"
    fake_tool(tmp_path / "bin", "launchctl", log)
    assert service_install.install(env=env, platform="darwin") == 0
    plist = Path(env["HOME"]) / "Library" / "LaunchAgents" / service_units.PLIST_NAME
    agent = plistlib.loads(plist.read_bytes())
    assert agent["ProgramArguments"] == [sys.executable, "-m", "coding_harness.daemon"]
    assert agent["StandardOutPath"].startswith(env["XDG_STATE_HOME"])
    assert Path(agent["StandardOutPath"]).parent.is_dir()  # launchd opens it before we run
    assert calls(log) == [["unload", str(plist)], ["load", "-w", str(plist)]]
    assert service_install.uninstall(env=env, platform="darwin") == 0
    assert not plist.exists()
    assert calls(log)[-1] == ["unload", "-w", str(plist)]


def test_unknown_platform_names_the_alternative(capsys: pytest.CaptureFixture[str]) -> None:
    assert service_install.install(env={"HOME": "/nonexistent"}, platform="plan9") == 1
    assert "harnessd" in capsys.readouterr().out
