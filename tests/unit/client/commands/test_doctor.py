"""`harness doctor` checks, each problem with its fix."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from coding_harness.client.commands import doctor, doctor_config
from tests.support.fake_model_server import FakeModelServer
from tests.support.service import fake_tool


def levels(findings: list[doctor_config.Finding]) -> list[str]:
    return [finding.level for finding in findings]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_socket_folder_private_missing_or_open(tmp_path: Path) -> None:
    env = {"CODING_HARNESS_SOCKET": str(tmp_path / "run" / "h.sock"), "HOME": str(tmp_path)}
    assert levels(doctor.check_socket(env)) == ["info"]
    (tmp_path / "run").mkdir(mode=0o700)
    assert levels(doctor.check_socket(env)) == ["ok"]
    (tmp_path / "run").chmod(0o755)
    (finding,) = doctor.check_socket(env)
    assert finding.level == "problem" and finding.fix == f"chmod 700 {tmp_path / 'run'}"
    (tmp_path / "run").chmod(0o700)
    (tmp_path / "link").symlink_to(tmp_path / "run")
    env["CODING_HARNESS_SOCKET"] = str(tmp_path / "link" / "h.sock")
    (finding,) = doctor.check_socket(env)
    assert "symbolic link" in finding.text and finding.fix.startswith("remove it")
    env["CODING_HARNESS_SOCKET"] = "/tmp/" + "x" * 120
    assert "longer than" in doctor.check_socket(env)[0].text


def test_config_files_checked_as_json_with_known_keys(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    cwd.mkdir()
    env = {"HOME": str(home), "XDG_STATE_HOME": str(tmp_path / "state")}
    findings, _ = doctor_config.check_configs(home, cwd, env)
    assert levels(findings) == ["info"] and "built-in" in findings[0].text
    config = home / ".coding_harness.json"
    config.write_text('{"providers": {"a": {"endpoint": "http://x/v1/chat/completions",}}}')
    (finding,) = doctor_config.check_configs(home, cwd, env)[0]
    assert finding.level == "problem" and "line 1" in finding.text
    profile = {"type": "gpt", "endpoint": "ftp://x", "api_key": "sk-1", "colour": 1}
    config.write_text(json.dumps({"providers": {"a": profile}, "defualt_provider": "a"}))
    texts = " | ".join(f.text for f in doctor_config.check_configs(home, cwd, env)[0])
    for expected in (
        "defualt_provider",
        "colour",
        "api_key is not read",
        ".type",
        ".endpoint",
        ".model is missing",
    ):
        assert expected in texts
    assert "sk-1" not in texts


def test_untrusted_project_providers_are_not_probed(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    cwd.mkdir()
    project = {
        "providers": {"evil": {"endpoint": "http://203.0.113.1/v1/chat/completions", "model": "m"}}
    }
    (cwd / ".local_coding_harness.json").write_text(json.dumps(project))
    env = {"HOME": str(home), "XDG_STATE_HOME": str(tmp_path / "state")}
    findings, merged = doctor_config.check_configs(home, cwd, env)
    assert any("untrusted" in f.text for f in findings)
    assert list(doctor_config.usable_profiles(merged)) == ["local"]


def test_endpoint_reachable_refused_or_down() -> None:
    with FakeModelServer() as server:
        profiles = {"fake": {"endpoint": server.endpoint}}
        (finding,) = doctor_config.check_endpoints(profiles, {}, timeout=2)
        assert finding.level == "ok" and "/v1/models" in finding.text
    down = f"http://127.0.0.1:{closed_port()}/v1/chat/completions"
    (finding,) = doctor_config.check_endpoints({"gone": {"endpoint": down}}, {}, timeout=2)
    assert finding.level == "problem" and "providers.gone.endpoint" in finding.fix


def test_missing_key_is_a_problem_only_for_the_default_provider() -> None:
    profiles = {
        "main": {"endpoint": "http://x", "api_key_env": "MAIN_KEY"},
        "spare": {"endpoint": "http://y", "api_key_env": "SPARE_KEY"},
    }
    findings = doctor_config.check_keys(profiles, "main", {"EXA_API_KEY": "k"})
    by_level = {f.text.split(" reads")[0]: f.level for f in findings if "reads" in f.text}
    assert by_level == {"provider main": "problem", "provider spare": "info"}
    assert any("EXA_API_KEY is set" in f.text for f in findings)
    assert any("BRAVE_SEARCH_API_KEY is not set" in f.text for f in findings)


def test_unit_state_installed_enabled_or_not(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "PATH": str(tmp_path / "bin")}
    assert levels(doctor.check_service(env, platform="linux")) == ["info"]
    from coding_harness.client.service import service_install

    service_install.install(env=env, platform="linux")  # no systemctl: files only
    (finding,) = doctor.check_service(env, platform="linux")
    assert finding.level == "problem" and "enable --now harnessd.socket" in finding.fix
    fake_tool(tmp_path / "bin", "systemctl", tmp_path / "log", stdout="enabled\n")
    assert levels(doctor.check_service(env, platform="linux")) == ["ok"]
    units = tmp_path / ".config" / "systemd" / "user"
    text = (units / "harnessd.service").read_text()
    (units / "harnessd.service").write_text(text.replace("ExecStart=", "ExecStart=/old/python "))
    problems = [f for f in doctor.check_service(env, platform="linux") if f.level == "problem"]
    assert problems and problems[0].fix == "run: harness daemon install"


def test_main_exits_1_with_fixes_and_0_when_all_is_well(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    for key, value in {
        "HOME": str(home),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "CODING_HARNESS_SOCKET": str(tmp_path / "run" / "h.sock"),
        "PATH": str(tmp_path / "bin"),
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(home)
    with FakeModelServer() as server:
        config = {"providers": {"fake": {"endpoint": server.endpoint, "model": "m"}}}
        (home / ".coding_harness.json").write_text(json.dumps(config))
        assert doctor.main([]) == 0
        assert capsys.readouterr().out.rstrip().endswith("all is well")
        (home / ".coding_harness.json").write_text("{")
        assert doctor.main([]) == 1
        out = capsys.readouterr().out
    assert "PROBLEM" in out and "fix: " in out and "2 problems to fix" in out
    assert doctor.main(["extra"]) == 5


def test_the_notes_and_json_schema_profile_keys_are_known(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    cwd.mkdir()
    env = {"HOME": str(home), "XDG_STATE_HOME": str(tmp_path / "state")}
    profile = {"type": "openai", "endpoint": "http://127.0.0.1:9/v1/chat/completions"}
    profile |= {"model": "m", "notes": False, "json_schema": False}
    (home / ".coding_harness.json").write_text(json.dumps({"providers": {"a": profile}}))
    texts = " | ".join(f.text for f in doctor_config.check_configs(home, cwd, env)[0])
    assert "unknown key" not in texts


def test_what_a_config_file_names_reaches_the_terminal_made_safe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    cwd.mkdir()
    hostile = "\x1b]0;owned\x07colour"
    (cwd / ".local_coding_harness.json").write_text(json.dumps({hostile: 1}))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    monkeypatch.setenv("CODING_HARNESS_SOCKET", str(tmp_path / "run" / "none.sock"))
    monkeypatch.chdir(cwd)
    doctor.main([])
    out = capsys.readouterr().out
    assert "colour" in out  # the unknown key is reported...
    assert "\x1b" not in out and "\x07" not in out  # ...without its control characters


def test_the_hooks_and_notify_keys_are_known(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    cwd.mkdir()
    env = {"HOME": str(home), "XDG_STATE_HOME": str(tmp_path / "state")}
    config = {"hooks": {"Stop": [{"command": "true"}]}, "notify": {"bell": False}}
    (home / ".coding_harness.json").write_text(json.dumps(config))
    texts = " | ".join(f.text for f in doctor_config.check_configs(home, cwd, env)[0])
    assert "unknown key" not in texts


def test_a_project_file_that_is_a_link_is_named_and_not_read(tmp_path: Path) -> None:
    """As the daemon does: a link is refused, whatever it points at."""
    home, cwd, elsewhere = tmp_path / "home", tmp_path / "proj", tmp_path / "elsewhere"
    for folder in (home, cwd, elsewhere):
        folder.mkdir()
    target = elsewhere / ".local_coding_harness.json"
    target.write_text(json.dumps({"providers": {"evil": {"model": "m"}}, "colour": 1}))
    (cwd / ".local_coding_harness.json").symlink_to(target)
    env = {"HOME": str(home), "XDG_STATE_HOME": str(tmp_path / "state")}
    findings, merged = doctor_config.check_configs(home, cwd, env)
    refused = [f for f in findings if "symbolic link" in f.text]
    assert len(refused) == 1 and refused[0].level == "problem"
    assert "colour" not in " | ".join(f.text for f in findings)  # never parsed
    assert "evil" not in merged.get("providers", {})
