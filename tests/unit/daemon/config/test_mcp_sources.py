"""Where a folder's MCP servers come from, with real files: the user's config, and a
project's `.mcp.json` and `.local_coding_harness.json` only once trusted as they are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coding_harness.daemon.config.loader import ConfigCache, load_config
from coding_harness.protocol import trust
from coding_harness.protocol.config_files import (
    GLOBAL_CONFIG_NAME,
    MCP_CONFIG_NAME,
    PROJECT_CONFIG_NAME,
)

USER_TIME = {"command": "/usr/bin/user-time", "args": ["--user"], "env": {"USER_TOKEN": "u"}}
PROJECT_TIME = {"command": "/opt/project-time"}
WEB = {"url": "http://127.0.0.1:9/mcp", "headers": {"X-Team": "core"}}
# Only the user's own file may hand a server a token (a project's may not read a secret).
USER_WEB = {**WEB, "bearer_token_env": "WEB_MCP_TOKEN"}


@pytest.fixture
def places(dirs: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path, Path]:
    """(home, project, trust store); the user's file declares a `time` server."""
    home, cwd = dirs
    write(home / GLOBAL_CONFIG_NAME, {"mcp_servers": {"time": USER_TIME}})
    return home, cwd, tmp_path / "state" / trust.STORE_NAME


def write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data))
    return path


def trusted(store: Path, path: Path) -> Path:
    """The store, now trusting `path` as it is."""
    trust.record(store, path, path.read_bytes())
    return store


def test_the_users_servers_count_with_scope_user(places: tuple[Path, Path, Path]) -> None:
    home, cwd, store = places
    config = load_config(home, cwd, trust_store=store)
    spec = config.mcp_servers["time"]
    assert (spec.scope, spec.cwd, spec.origin) == (
        "user",
        str(home),
        str(home / GLOBAL_CONFIG_NAME),
    )
    assert config.problems == ()


def test_a_bad_user_server_is_reported_and_the_others_kept(
    places: tuple[Path, Path, Path],
) -> None:
    home, cwd, store = places
    write(home / GLOBAL_CONFIG_NAME, {"mcp_servers": {"time": USER_TIME, "x": {"command": 3}}})
    config = load_config(home, cwd, trust_store=store)
    assert list(config.mcp_servers) == ["time"]
    assert config.problems == (
        f"{home / GLOBAL_CONFIG_NAME}: mcp_servers.x.command must be a program name or path; "
        "this MCP server was left out",
    )


def test_an_untrusted_mcp_json_gives_no_servers_and_says_how_to_trust(
    places: tuple[Path, Path, Path],
) -> None:
    home, cwd, store = places
    write(cwd / MCP_CONFIG_NAME, {"mcpServers": {"evil": {"command": "/tmp/evil"}}})
    config = load_config(home, cwd, trust_store=store)
    assert list(config.mcp_servers) == ["time"]
    (problem,) = config.problems
    assert problem.startswith(str(cwd / MCP_CONFIG_NAME))
    assert "harness trust" in problem and str(cwd) in problem
    assert "/tmp/evil" not in problem
    no_store = load_config(home, cwd)
    assert list(no_store.mcp_servers) == ["time"] and len(no_store.problems) == 1


def test_a_trusted_mcp_json_counts_with_scope_project(places: tuple[Path, Path, Path]) -> None:
    home, cwd, store = places
    path = write(cwd / MCP_CONFIG_NAME, {"mcpServers": {"web": WEB, "git": {"command": "g"}}})
    config = load_config(home, cwd, trust_store=trusted(store, path))
    assert sorted(config.mcp_servers) == ["git", "time", "web"] and config.problems == ()
    git, web = config.mcp_servers["git"], config.mcp_servers["web"]
    assert (git.scope, git.cwd, git.origin) == ("project", str(cwd), str(path))
    assert (web.scope, web.transport, web.url) == ("project", "http", WEB["url"])


def test_a_trusted_mcp_json_replaces_a_user_server_of_the_same_name(
    places: tuple[Path, Path, Path],
) -> None:
    home, cwd, store = places
    path = write(cwd / MCP_CONFIG_NAME, {"mcpServers": {"time": PROJECT_TIME}})
    spec = load_config(home, cwd, trust_store=trusted(store, path)).mcp_servers["time"]
    assert (spec.command, spec.args, spec.env) == ("/opt/project-time", (), ())
    assert spec.scope == "project"


def test_a_bad_trusted_mcp_json_server_is_named_by_file_and_key(
    places: tuple[Path, Path, Path],
) -> None:
    home, cwd, store = places
    path = write(cwd / MCP_CONFIG_NAME, {"mcpServers": {"web": WEB, "bad": {"url": "nope"}}})
    config = load_config(home, cwd, trust_store=trusted(store, path))
    assert sorted(config.mcp_servers) == ["time", "web"]
    assert config.problems == (
        f"{path}: mcpServers.bad.url must be an http:// or https:// address; "
        "this MCP server was left out",
    )


@pytest.mark.parametrize(
    ("text", "says"),
    [("{not json", "not valid JSON"), ("[1]", "the top level must be a JSON object")],
)
def test_a_broken_trusted_mcp_json_is_ignored_with_a_problem(
    places: tuple[Path, Path, Path], text: str, says: str
) -> None:
    home, cwd, store = places
    path = cwd / MCP_CONFIG_NAME
    path.write_text(text)
    config = load_config(home, cwd, trust_store=trusted(store, path))
    assert list(config.mcp_servers) == ["time"]
    (problem,) = config.problems
    assert problem.startswith(f"{path}: {says}") and problem.endswith("it was ignored")


def test_a_change_to_mcp_json_revokes_its_trust(places: tuple[Path, Path, Path]) -> None:
    home, cwd, store = places
    path = write(cwd / MCP_CONFIG_NAME, {"mcpServers": {"web": WEB}})
    trusted(store, path)
    assert "web" in load_config(home, cwd, trust_store=store).mcp_servers
    write(path, {"mcpServers": {"web": {**WEB, "url": "http://collector.example/mcp"}}})
    config = load_config(home, cwd, trust_store=store)
    assert list(config.mcp_servers) == ["time"]
    assert "harness trust" in config.problems[0]


def test_trusting_the_harness_file_does_not_trust_mcp_json(
    places: tuple[Path, Path, Path],
) -> None:
    home, cwd, store = places
    trusted(store, write(cwd / PROJECT_CONFIG_NAME, {"quiet": True}))
    write(cwd / MCP_CONFIG_NAME, {"mcpServers": {"web": WEB}})
    config = load_config(home, cwd, trust_store=store)
    assert list(config.mcp_servers) == ["time"]


def test_project_file_mcp_servers_wait_for_trust(places: tuple[Path, Path, Path]) -> None:
    home, cwd, store = places
    write(cwd / PROJECT_CONFIG_NAME, {"mcp_servers": {"time": PROJECT_TIME, "web": WEB}})
    config = load_config(home, cwd, trust_store=store)
    assert list(config.mcp_servers) == ["time"]
    assert config.mcp_servers["time"].command == USER_TIME["command"]
    assert set(config.untrusted) == {
        "mcp_servers.time.command",
        "mcp_servers.web.url",
        "mcp_servers.web.headers.X-Team",
    }
    (problem,) = config.problems
    assert "harness trust" in problem and "mcp_servers.time.command" in problem


def test_a_trusted_project_file_adds_servers_with_scope_project(
    places: tuple[Path, Path, Path],
) -> None:
    home, cwd, store = places
    path = write(cwd / PROJECT_CONFIG_NAME, {"mcp_servers": {"web": WEB}})
    config = load_config(home, cwd, trust_store=trusted(store, path))
    web, time = config.mcp_servers["web"], config.mcp_servers["time"]
    assert (web.scope, web.origin) == ("project", str(path))
    assert (time.scope, time.cwd) == ("user", str(home))
    assert config.problems == ()


def test_a_trusted_project_file_replaces_a_user_server_of_the_same_name(
    places: tuple[Path, Path, Path],
) -> None:
    home, cwd, store = places
    path = write(cwd / PROJECT_CONFIG_NAME, {"mcp_servers": {"time": PROJECT_TIME}})
    spec = load_config(home, cwd, trust_store=trusted(store, path)).mcp_servers["time"]
    assert (spec.command, spec.scope, spec.cwd) == ("/opt/project-time", "project", str(cwd))
    assert (spec.args, spec.env) == ((), ())  # nothing of the user's entry


def test_a_trusted_project_http_server_replaces_a_user_stdio_server(
    places: tuple[Path, Path, Path],
) -> None:
    home, cwd, store = places
    path = write(cwd / PROJECT_CONFIG_NAME, {"mcp_servers": {"time": WEB}})
    config = load_config(home, cwd, trust_store=trusted(store, path))
    assert config.problems == ()
    assert config.mcp_servers["time"].url == WEB["url"]


def test_the_project_file_wins_over_mcp_json(places: tuple[Path, Path, Path]) -> None:
    home, cwd, store = places
    trusted(store, write(cwd / MCP_CONFIG_NAME, {"mcpServers": {"web": {"command": "a"}}}))
    trusted(store, write(cwd / PROJECT_CONFIG_NAME, {"mcp_servers": {"web": WEB}}))
    spec = load_config(home, cwd, trust_store=store).mcp_servers["web"]
    assert (spec.transport, spec.url) == ("http", WEB["url"])


def test_key_env_names_include_the_servers_bearer_tokens(
    places: tuple[Path, Path, Path],
) -> None:
    home, cwd, store = places
    write(home / GLOBAL_CONFIG_NAME, {"mcp_servers": {"web": USER_WEB, "time": USER_TIME}})
    names = load_config(home, cwd, trust_store=store).key_env_names()
    assert "WEB_MCP_TOKEN" in names and "USER_TOKEN" not in names


def test_the_cache_sees_an_edited_mcp_json(places: tuple[Path, Path, Path]) -> None:
    home, cwd, store = places
    cache = ConfigCache(home, trust_store=store)
    assert list(cache.get(cwd).mcp_servers) == ["time"]
    path = write(cwd / MCP_CONFIG_NAME, {"mcpServers": {"web": WEB}})
    trusted(store, path)
    assert sorted(cache.get(cwd).mcp_servers) == ["time", "web"]
    write(path, {"mcpServers": {"web": WEB, "git": {"command": "git-server"}}})
    edited = cache.get(cwd)
    assert list(edited.mcp_servers) == ["time"]  # changed, so no longer trusted
    assert any("harness trust" in problem for problem in cache.unreported(edited))
    trusted(store, path)
    assert sorted(cache.get(cwd).mcp_servers) == ["git", "time", "web"]


def test_the_mcp_json_parsed_is_the_one_trusted(
    places: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    home, cwd, store = places
    path = write(cwd / MCP_CONFIG_NAME, {"mcpServers": {"web": WEB}})
    trusted(store, path)
    swapped = json.dumps({"mcpServers": {"evil": {"command": "/tmp/evil"}}}).encode()
    reads: list[Path] = []
    read_bytes = Path.read_bytes

    def racing_read(self: Path) -> bytes:
        """The file as it was at its first read, then as a checkout has just made it."""
        if self != path:
            return read_bytes(self)
        reads.append(self)
        return read_bytes(self) if len(reads) == 1 else swapped

    monkeypatch.setattr(Path, "read_bytes", racing_read)
    servers = load_config(home, cwd, trust_store=store).mcp_servers
    assert "evil" not in servers
