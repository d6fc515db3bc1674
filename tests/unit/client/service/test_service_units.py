"""The shipped systemd units and launchd plist: parsed, checked, verified when possible."""

from __future__ import annotations

import configparser
import os
import plistlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from coding_harness.client.service import service_units

ROOT = Path(__file__).resolve().parents[4]
SERVICE = ROOT / "systemd" / "harnessd.service"
SOCKET = ROOT / "systemd" / "harnessd.socket"
PLIST = ROOT / "launchd" / service_units.PLIST_NAME


def parse_unit(text: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(text)
    return parser


def systemd_verify(*units: Path) -> subprocess.CompletedProcess[str]:
    # A short runtime folder: the socket's path in it must fit a Unix socket's 108
    # bytes, and pytest's own (longer under xdist: .../popen-gw3/...) may not.
    with tempfile.TemporaryDirectory(prefix="chs-", dir="/tmp") as runtime:
        Path(runtime).chmod(0o700)
        return subprocess.run(
            ["systemd-analyze", "verify", "--user", *map(str, units)],
            env={**os.environ, "XDG_RUNTIME_DIR": runtime},
            capture_output=True,
            text=True,
            timeout=60,
        )


def test_shipped_files_are_the_current_rendering() -> None:
    for relative, data in service_units.reference_files().items():
        assert (ROOT / relative).read_bytes() == data, (
            f"{relative} is out of date; regenerate with: .venv/bin/python -c "
            "'from pathlib import Path; from coding_harness.client.service.service_units import "
            'write_reference_files; write_reference_files(Path("."))\''
        )


def test_service_unit_settings() -> None:
    unit = parse_unit(SERVICE.read_text())
    service = unit["Service"]
    assert service["Type"] == "notify"
    assert service["NotifyAccess"] == "main"
    assert service["Restart"] == "on-failure"
    assert service["ExecStart"].endswith("-m coding_harness.daemon")
    assert service["RestartPreventExitStatus"] == "78"
    assert float(service["TimeoutStopSec"]) > 10  # more than the daemon's drain time
    assert service["KillMode"] == "control-group"
    start_limit = unit["Unit"]
    assert int(start_limit["StartLimitBurst"]) >= 3
    assert int(start_limit["StartLimitIntervalSec"]) >= 60
    assert start_limit["Requires"] == "harnessd.socket"
    assert "Environment" not in service  # no secrets, nothing installation-specific


def test_socket_unit_settings() -> None:
    socket_unit = parse_unit(SOCKET.read_text())["Socket"]
    assert socket_unit["ListenStream"] == "%t/coding-harness/harnessd.sock"
    assert socket_unit["SocketMode"] == "0600"
    assert socket_unit["DirectoryMode"] == "0700"
    assert socket_unit["Accept"] == "no"
    assert parse_unit(SOCKET.read_text())["Install"]["WantedBy"] == "sockets.target"


def test_launchd_plist_loads_and_declares_what_launchd_needs() -> None:
    agent = plistlib.loads(PLIST.read_bytes())
    assert agent["Label"] == service_units.LABEL
    assert agent["ProgramArguments"][-2:] == ["-m", "coding_harness.daemon"]
    assert agent["RunAtLoad"] is True
    assert agent["KeepAlive"] == {"SuccessfulExit": False}
    assert agent["StandardOutPath"].startswith("/") and agent["StandardErrorPath"].startswith("/")
    for socket in agent.get("Sockets", {}).values():
        assert socket["SockPathMode"] == 384  # 0600


def test_rendering_for_this_installation_quotes_what_systemd_would_expand() -> None:
    text = service_units.render_service(["/opt/my tools/python"], {"XDG_STATE_HOME": "/s/my 100%"})
    service = parse_unit(text)["Service"]
    assert service["ExecStart"] == '"/opt/my tools/python" -m coding_harness.daemon'
    assert service["Environment"] == '"XDG_STATE_HOME=/s/my 100%%"'
    assert service_units.systemd_word("/a$b") == '"/a$$b"'
    agent = plistlib.loads(
        service_units.render_plist([sys.executable], Path("/st"), {"XDG_STATE_HOME": "/st"})
    )
    assert agent["ProgramArguments"] == [sys.executable, "-m", "coding_harness.daemon"]
    assert agent["EnvironmentVariables"] == {"XDG_STATE_HOME": "/st"}
    assert agent["StandardErrorPath"] == "/st/launchd.err.log"


def test_unit_folders_follow_home_and_xdg_config_home() -> None:
    assert service_units.unit_dir({"HOME": "/h"}) == Path("/h/.config/systemd/user")
    assert service_units.unit_dir({"HOME": "/h", "XDG_CONFIG_HOME": "/c"}) == Path(
        "/c/systemd/user"
    )
    assert service_units.launch_agents_dir({"HOME": "/h"}) == Path("/h/Library/LaunchAgents")


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze here")
def test_systemd_analyze_verifies_shipped_and_installed_units(tmp_path: Path) -> None:
    shipped = systemd_verify(SOCKET, SERVICE)
    assert shipped.returncode == 0 and not shipped.stderr.strip(), shipped.stderr
    installed = tmp_path / "units"
    installed.mkdir()
    (installed / "harnessd.socket").write_text(service_units.render_socket())
    (installed / "harnessd.service").write_text(
        service_units.render_service([sys.executable], {"XDG_STATE_HOME": str(tmp_path)})
    )
    result = systemd_verify(installed / "harnessd.socket", installed / "harnessd.service")
    assert result.returncode == 0 and not result.stderr.strip(), result.stderr
