"""`harness web --service` / `--remove-service` in a temporary HOME, with fake service tools.

The unit's content (parsed as systemd and launchd read it), what systemctl /
launchctl are asked, the URL printed with the kept token, and the refusals.
"""

from __future__ import annotations

import plistlib
import shutil
import sys
from pathlib import Path

import pytest

from coding_harness.client.service import web_install, web_unit
from coding_harness.client.web.options import parse
from tests.support.service import fake_tool
from tests.unit.client.service.test_service_install import calls
from tests.unit.client.service.test_service_units import parse_unit, systemd_verify


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


def _url(out: str) -> str:
    found = [line.removeprefix("open: ") for line in out.splitlines() if line.startswith("open: ")]
    assert len(found) == 1, out
    return found[0]


def test_linux_install_writes_the_unit_enables_it_and_prints_a_url_that_stays(
    env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "systemctl.log"
    fake_tool(tmp_path / "bin", "systemctl", log)
    code = web_install.install(
        "0.0.0.0", 9000, ["box.tailnet.ts.net"], "box.tailnet.ts.net", env=env, platform="linux"
    )
    assert code == 0
    unit = parse_unit((Path(env["HOME"]) / ".config/systemd/user/harness-web.service").read_text())
    assert unit["Service"]["ExecStart"] == (
        f"{sys.executable} -m coding_harness.client web --host 0.0.0.0 --port 9000 "
        "--allow-host box.tailnet.ts.net --keep-token --no-qr"
    )
    assert unit["Service"]["Environment"] == f"XDG_STATE_HOME={env['XDG_STATE_HOME']}"
    assert unit["Service"]["Restart"] == "on-failure"
    assert unit["Service"]["RestartPreventExitStatus"] == "5"
    assert unit["Unit"]["Wants"] == "harnessd.socket"
    assert unit["Install"]["WantedBy"] == "default.target"
    assert calls(log) == [
        ["--user", "daemon-reload"],
        ["--user", "enable", "--now", "harness-web.service"],
        ["--user", "try-restart", "harness-web.service"],
    ]
    out = capsys.readouterr().out
    token = (Path(env["XDG_STATE_HOME"]) / "coding-harness" / "web-token").read_text().strip()
    assert _url(out) == f"http://box.tailnet.ts.net:9000/?token={token}"
    assert (
        Path(env["XDG_STATE_HOME"]) / "coding-harness" / "web-token"
    ).stat().st_mode & 0o777 == 0o600

    # again: the same URL (the token the unit keeps), the unit rewritten in place
    assert (
        web_install.install(
            "0.0.0.0", 9000, ["box.tailnet.ts.net"], "box.tailnet.ts.net", env=env, platform="linux"
        )
        == 0
    )
    assert _url(capsys.readouterr().out) == f"http://box.tailnet.ts.net:9000/?token={token}"

    assert web_install.uninstall(env=env, platform="linux") == 0
    assert not (Path(env["HOME"]) / ".config/systemd/user/harness-web.service").exists()
    assert calls(log)[-2:] == [
        ["--user", "disable", "--now", "harness-web.service"],
        ["--user", "daemon-reload"],
    ]
    assert web_install.uninstall(env=env, platform="linux") == 0
    assert "nothing to remove" in capsys.readouterr().out


def test_without_systemctl_the_commands_are_printed(
    env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    assert web_install.install("127.0.0.1", 8765, [], "127.0.0.1", env=env, platform="linux") == 0
    assert (tmp_path / "config/systemd/user/harness-web.service").exists()
    out = capsys.readouterr().out
    assert "systemctl --user enable --now harness-web.service" in out
    assert _url(out).startswith("http://127.0.0.1:8765/?token=")


def test_a_failing_systemctl_is_exit_1_and_prints_no_url(
    env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_tool(tmp_path / "bin", "systemctl", tmp_path / "log", exit_code=1)
    assert web_install.install("127.0.0.1", 8765, [], "127.0.0.1", env=env, platform="linux") == 1
    captured = capsys.readouterr()
    assert "open: " not in captured.out and "run that command again" in captured.err


def test_a_service_needs_a_fixed_port(
    env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert web_install.install("127.0.0.1", 0, [], "127.0.0.1", env=env, platform="linux") == 5
    assert "--port N" in capsys.readouterr().err
    assert not (Path(env["HOME"]) / ".config").exists()


def test_macos_install_writes_an_agent_and_loads_it(
    env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "launchctl.log"
    fake_tool(tmp_path / "bin", "launchctl", log)
    assert web_install.install("127.0.0.1", 8765, [], "127.0.0.1", env=env, platform="darwin") == 0
    plist = Path(env["HOME"]) / "Library" / "LaunchAgents" / web_unit.WEB_PLIST_NAME
    agent = plistlib.loads(plist.read_bytes())
    assert agent["Label"] == "org.coding-harness.web"
    assert agent["ProgramArguments"] == [
        sys.executable, "-m", "coding_harness.client", "web",
        "--host", "127.0.0.1", "--port", "8765", "--keep-token", "--no-qr",
    ]  # fmt: skip
    assert agent["KeepAlive"] == {"SuccessfulExit": False} and agent["RunAtLoad"] is True
    assert agent["EnvironmentVariables"] == {"XDG_STATE_HOME": env["XDG_STATE_HOME"]}
    assert agent["StandardOutPath"] == str(
        Path(env["XDG_STATE_HOME"]) / "coding-harness" / "web.out.log"
    )
    assert calls(log) == [["unload", str(plist)], ["load", "-w", str(plist)]]
    assert "open: http://127.0.0.1:8765/?token=" in capsys.readouterr().out
    assert web_install.uninstall(env=env, platform="darwin") == 0
    assert not plist.exists() and calls(log)[-1] == ["unload", "-w", str(plist)]


def test_the_options_ask_for_one_of_install_or_remove() -> None:
    options = parse(["--service", "--port", "9000"])
    assert options is not None and options.service and options.port == 9000
    removing = parse(["--remove-service"])
    assert removing is not None and removing.remove_service and not removing.service
    with pytest.raises(Exception, match="choose one"):
        parse(["--service", "--remove-service"])


def test_paths_with_spaces_and_percents_are_quoted_for_systemd() -> None:
    command = web_unit.web_command(["/opt/my tools/python"], "127.0.0.1", 8765, [])
    text = web_unit.render_web_service(command, {"XDG_STATE_HOME": "/s/my 100%"})
    service = parse_unit(text)["Service"]
    assert service["ExecStart"].startswith('"/opt/my tools/python" -m coding_harness.client web')
    assert service["Environment"] == '"XDG_STATE_HOME=/s/my 100%%"'


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze here")
def test_systemd_analyze_verifies_the_web_unit(tmp_path: Path) -> None:
    command = web_unit.web_command([sys.executable], "127.0.0.1", 8765, [])
    unit = tmp_path / "harness-web.service"
    unit.write_text(web_unit.render_web_service(command, {"XDG_STATE_HOME": str(tmp_path)}))
    result = systemd_verify(unit)
    assert result.returncode == 0 and not result.stderr.strip(), result.stderr
