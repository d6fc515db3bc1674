"""Version skew, `harness daemon install|uninstall` and `harness doctor`, end to end."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply
from tests.support.processes import run_harness, start_daemon
from tests.support.service import fake_tool, old_daemon, stop_process


def harness(
    sandbox: Sandbox, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_harness(list(args), env=env or sandbox.env, cwd=sandbox.workspace)


def skew_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if "newer than the running daemon" in line]


def test_a_client_newer_than_the_daemon_says_so_once(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    model.add(Reply(content="still works"))
    with old_daemon(sandbox.socket, sandbox.env, "0.0.1"):
        result = harness(sandbox, "-p", "say hello")
        assert result.returncode == 0, result.stderr
        assert "still works" in result.stdout
        (line,) = skew_lines(result.stderr)
        assert "(0.0.1)" in line and "harness daemon restart" in line
        status = harness(sandbox, "daemon", "status")
        assert status.returncode == 0 and len(skew_lines(status.stdout)) == 1
        doctor = harness(sandbox, "doctor")
        assert doctor.returncode == 1 and "fix: run: harness daemon restart" in doctor.stdout


def test_same_version_says_nothing(sandbox: Sandbox, model: FakeModelServer) -> None:
    model.add(Reply(content="fine"))
    result = harness(sandbox, "-p", "say hello")
    assert result.returncode == 0, result.stderr
    assert skew_lines(result.stderr) == []


def test_install_and_uninstall_in_a_temporary_home(sandbox: Sandbox) -> None:
    bin_dir, log = sandbox.root / "bin", sandbox.root / "systemctl.log"
    fake_tool(bin_dir, "systemctl", log)
    env = {**sandbox.env, "PATH": f"{bin_dir}:{Path(sys.executable).parent}"}
    result = harness(sandbox, "daemon", "install", env=env)
    assert result.returncode == 0, result.stderr
    units = sandbox.home / ".config" / "systemd" / "user"
    assert (
        f"ExecStart={sys.executable} -m coding_harness.daemon"
        in (units / "harnessd.service").read_text()
    )
    assert (units / "harnessd.socket").exists()
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert calls == [["--user", "daemon-reload"], ["--user", "enable", "--now", "harnessd.socket"]]
    assert "unset CODING_HARNESS_SOCKET" in result.stdout or "XDG_RUNTIME_DIR" in result.stdout

    removed = harness(sandbox, "daemon", "uninstall", env=env)
    assert removed.returncode == 0, removed.stderr
    assert not list(units.iterdir())
    assert ["--user", "disable", "--now", "harnessd.socket", "harnessd.service"] in [
        json.loads(line) for line in log.read_text().splitlines()
    ]


def test_install_without_systemctl_prints_the_commands(sandbox: Sandbox) -> None:
    env = {
        **sandbox.env,
        "PATH": str(Path(sys.executable).parent),
        "XDG_CONFIG_HOME": str(sandbox.root / "cfg"),
    }
    result = harness(sandbox, "daemon", "install", env=env)
    assert result.returncode == 0, result.stderr
    assert "systemctl --user enable --now harnessd.socket" in result.stdout
    assert (sandbox.root / "cfg" / "systemd" / "user" / "harnessd.service").exists()
    assert not (sandbox.home / ".config").exists()


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze here")
def test_installed_units_pass_systemd_analyze(sandbox: Sandbox) -> None:
    env = {**sandbox.env, "PATH": str(Path(sys.executable).parent)}
    assert harness(sandbox, "daemon", "install", env=env).returncode == 0
    units = sandbox.home / ".config" / "systemd" / "user"
    runtime = sandbox.root / "runtime"
    runtime.mkdir(mode=0o700)
    verify = subprocess.run(
        [
            "systemd-analyze",
            "verify",
            "--user",
            str(units / "harnessd.socket"),
            str(units / "harnessd.service"),
        ],
        env={**sandbox.env, "XDG_RUNTIME_DIR": str(runtime)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert verify.returncode == 0 and not verify.stderr.strip(), verify.stderr


def test_doctor_passes_then_names_each_problem_with_its_fix(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    env = {**sandbox.env, "PATH": str(Path(sys.executable).parent)}
    healthy = harness(sandbox, "doctor", env=env)
    assert healthy.returncode == 0, healthy.stdout
    assert "PROBLEM" not in healthy.stdout and healthy.stdout.rstrip().endswith("all is well")
    sandbox.socket.parent.mkdir(mode=0o700)
    sandbox.socket.parent.chmod(0o755)
    (sandbox.home / ".coding_harness.json").write_text('{"providers": ')
    broken = harness(sandbox, "doctor", env=env)
    assert broken.returncode == 1
    assert f"fix: chmod 700 {sandbox.socket.parent}" in broken.stdout
    assert "not valid JSON" in broken.stdout and "fix: correct it there" in broken.stdout


def test_install_stops_a_daemon_started_by_hand_first(sandbox: Sandbox) -> None:
    process = start_daemon(sandbox.socket, sandbox.env)
    try:
        env = {**sandbox.env, "PATH": str(Path(sys.executable).parent)}
        result = harness(sandbox, "daemon", "install", env=env)
        assert result.returncode == 0, result.stderr
        assert f"started outside the service manager (pid {process.pid})" in result.stdout
        assert process.wait(timeout=20) == 0
    finally:
        stop_process(process)
