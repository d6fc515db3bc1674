"""`harness doctor` on the MCP servers of the config files: each command found, each url
http(s), a project's servers only once trusted; every problem names its fix."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from coding_harness.client.commands import doctor_config
from coding_harness.client.commands.doctor_mcp import check_mcp
from coding_harness.protocol import trust


@pytest.fixture
def place(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    home, cwd, bin_dir = tmp_path / "home", tmp_path / "proj", tmp_path / "bin"
    for folder in (home, cwd, bin_dir):
        folder.mkdir()
    program = bin_dir / "mcp-server-here"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    env = {"HOME": str(home), "XDG_STATE_HOME": str(tmp_path / "state"), "PATH": str(bin_dir)}
    return home, cwd, env


def configure(home: Path, servers: dict[str, object]) -> None:
    (home / ".coding_harness.json").write_text(json.dumps({"mcp_servers": servers}))


def by_name(findings: list[doctor_config.Finding]) -> dict[str, doctor_config.Finding]:
    """Each finding by the server it is about (`...: mcp_servers.NAME...`)."""
    named = (re.search(r"mcp_?[sS]ervers\.([\w-]+)", f.text) for f in findings)
    return {match.group(1): f for match, f in zip(named, findings, strict=True) if match}


def test_each_stdio_command_is_found_or_named_with_its_fix(
    place: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    home, cwd, env = place
    (tmp_path / "not-executable").write_text("")
    configure(
        home,
        {
            "here": {"command": "mcp-server-here"},
            "absolute": {"command": str(tmp_path / "bin" / "mcp-server-here"), "args": ["-v"]},
            "missing": {"command": "mcp-server-nowhere"},
            "path": {"command": str(tmp_path / "not-executable")},
            "spaced": {"command": "mcp-server-here --flag"},
            "bad_args": {"command": "mcp-server-here", "args": "--flag"},
        },
    )
    findings = check_mcp(home, cwd, env)
    found = by_name(findings)
    assert found["here"].level == "ok" and str(tmp_path / "bin") in found["here"].text
    assert found["absolute"].level == "ok"
    missing = found["missing"]
    assert missing.level == "problem" and "mcp-server-nowhere is not found on PATH" in missing.text
    assert "install mcp-server-nowhere" in missing.fix and "absolute path" in missing.fix
    assert found["path"].level == "problem" and "not an executable file" in found["path"].text
    assert "put the arguments in args" in found["spaced"].fix
    assert any("bad_args.args is not a list of strings" in f.text for f in findings)


def test_http_servers_and_the_choices(place: tuple[Path, Path, dict[str, str]]) -> None:
    home, cwd, env = place
    configure(
        home,
        {
            "web": {"url": "http://127.0.0.1:8000/mcp"},
            "ftp": {"url": "ftp://example.org/mcp"},
            "token": {"url": "https://example.org/mcp", "bearer_token_env": "MCP_TOKEN_X"},
            "both": {"url": "https://example.org/mcp", "command": "mcp-server-here"},
            "neither": {"args": []},
            "odd": {"command": "mcp-server-here", "approve": "sometimes", "start": "now"},
            "off": {"command": "not-installed-y", "disabled": True},
            "bad name": {"command": "mcp-server-here"},
        },
    )
    found = check_mcp(home, cwd, env)
    texts = " | ".join(f"{f.level}: {f.text} -> {f.fix}" for f in found)
    assert "ok: " in texts and "HTTP server at http://127.0.0.1:8000/mcp" in texts
    assert "mcp_servers.ftp.url is not an http(s) URL -> set the full URL" in texts
    assert "reads its token from MCP_TOKEN_X, which is not set here -> export MCP_TOKEN_X" in texts
    assert "mcp_servers.both has both command and url" in texts
    assert "mcp_servers.neither has neither command nor url" in texts
    assert "odd.approve is 'sometimes'" in texts and "odd.start is 'now'" in texts
    assert "info: " in texts and "mcp_servers.off is disabled" in texts
    assert "mcp_servers.bad name: the name cannot be used -> rename it" in texts
    assert by_name(check_mcp(home, cwd, {**env, "MCP_TOKEN_X": "t"}))["token"].level == "ok"


def test_a_projects_servers_are_checked_only_once_trusted(
    place: tuple[Path, Path, dict[str, str]],
) -> None:
    home, cwd, env = place
    mcp_json = cwd / ".mcp.json"
    mcp_json.write_text(json.dumps({"mcpServers": {"proj": {"command": "not-installed-x"}}}))
    local = cwd / ".local_coding_harness.json"
    local.write_text(json.dumps({"mcp_servers": {"local": {"command": "mcp-server-here"}}}))
    (first, second) = check_mcp(home, cwd, env)
    assert first.level == second.level == "info"
    assert "local not checked: not trusted: run harness trust" in first.text
    assert "proj not checked: not trusted: run harness trust" in second.text
    store = trust.store_path(env)
    trust.record(store, mcp_json, mcp_json.read_bytes())
    trust.record(store, local, local.read_bytes())
    found = by_name(check_mcp(home, cwd, env))
    assert found["local"].level == "ok"
    (proj,) = [f for f in check_mcp(home, cwd, env) if "mcpServers.proj" in f.text]
    assert proj.level == "problem" and "not-installed-x is not found on PATH" in proj.text


def test_an_unreadable_mcp_json_is_a_problem_and_mcp_servers_a_known_key(
    place: tuple[Path, Path, dict[str, str]],
) -> None:
    home, cwd, env = place
    (cwd / ".mcp.json").write_text("{nope")
    (finding,) = check_mcp(home, cwd, env)
    assert finding.level == "problem" and "cannot be read as JSON" in finding.text
    configure(home, {"here": {"command": "mcp-server-here"}})
    findings, _ = doctor_config.check_configs(home, cwd, env)
    assert [f.level for f in findings] == ["ok"]  # mcp_servers is no unknown key


def test_a_linked_mcp_json_is_named_and_its_servers_not_checked(
    place: tuple[Path, Path, dict[str, str]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    home, cwd, env = place
    elsewhere = tmp_path_factory.mktemp("elsewhere") / ".mcp.json"
    elsewhere.write_text(json.dumps({"mcpServers": {"here": {"command": "mcp-server-here"}}}))
    (cwd / ".mcp.json").symlink_to(elsewhere)
    (finding,) = check_mcp(home, cwd, env)
    assert finding.level == "problem" and "symbolic link" in finding.text
