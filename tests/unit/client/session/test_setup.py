"""`SessionRequest`: the one-shot reaches its session in one request (issue 11 item 16).

A recording stand-in for the connection shows which requests go out; the
daemon's side of the combined `initialize` is in
tests/integration/test_initialize_session.py.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from coding_harness.client.args import OneShotOptions
from coding_harness.client.render.style import Style
from coding_harness.client.session.config_defaults import key_names
from coding_harness.client.session.setup import SessionRequest
from coding_harness.protocol import errors
from coding_harness.protocol.client import DaemonUnreachable
from coding_harness.protocol.config_files import DISCOVERY_KEY_VARIABLES, SEARCH_KEY_VARIABLES
from coding_harness.protocol.version import __version__

SUMMARY = {"session": "s1", "cwd": "/w", "provider": "p", "model": "m", "key_env": ["K"]}


class Recorder:
    """Answers like a daemon that knows the combined form (or, `old`, one that does not)."""

    def __init__(self, *, old: bool = False, ignores: bool = False) -> None:
        self.sent: list[tuple[str, dict[str, Any] | None]] = []
        self.answered: list[int] = []
        self.pending: dict[str, Any] | None = None
        self.old, self.ignores = old, ignores

    def initialize(self, name: str, version: str, **kw: Any) -> dict[str, Any]:
        return self.initialized(self.send_initialize(name, version, **kw))

    def send_initialize(self, name: str, version: str, **kw: Any) -> int:
        self.sent.append(("initialize", kw.get("session")))
        self.pending = kw.get("session")
        return len(self.sent)

    def initialized(self, request_id: int) -> dict[str, Any]:
        self.answered.append(request_id)
        info: dict[str, Any] = {"daemon": {"version": __version__}, "key_env": ["K"]}
        if self.pending is not None and not self.ignores:
            if self.old:
                raise errors.InvalidParams()
            info["session"] = {**SUMMARY, "last_seq": 7}
        return info

    def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        self.sent.append((method, params))
        if method == "session.attach":
            return {**SUMMARY, "last_seq": 7}
        return dict(SUMMARY)


def start(options: OneShotOptions, conn: Recorder) -> dict[str, Any]:
    request = SessionRequest(conn, options, ("harness", __version__))  # type: ignore[arg-type]
    return request.finish(Style(io.StringIO()))


def test_a_new_session_is_created_by_initialize_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    profile = {"type": "openai", "endpoint": "http://x/v1", "model": "m", "api_key_env": "MINE_KEY"}
    (tmp_path / ".coding_harness.json").write_text(json.dumps({"providers": {"p": profile}}))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("MINE_KEY", "sk-mine")
    for name in SEARCH_KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    conn = Recorder()
    session = start(OneShotOptions(cwd=str(tmp_path), quiet=True), conn)
    [(method, spec)] = conn.sent
    assert method == "initialize" and spec is not None
    assert spec["cwd"] == str(tmp_path.resolve()) and spec["env"] == {"MINE_KEY": "sk-mine"}
    assert session["session"] == "s1" and session["last_seq"] == 7


def test_the_request_goes_out_when_made_and_is_read_by_finish(tmp_path: Path) -> None:
    conn = Recorder()
    options = OneShotOptions(cwd=str(tmp_path), quiet=True)
    request = SessionRequest(conn, options, ("harness", __version__))  # type: ignore[arg-type]
    assert [method for method, _ in conn.sent] == ["initialize"] and conn.answered == []
    request.finish(Style(io.StringIO()))
    assert conn.answered == [1]


def test_a_request_that_could_not_be_sent_fails_in_finish(tmp_path: Path) -> None:
    class Broken(Recorder):
        def send_initialize(self, name: str, version: str, **kw: Any) -> int:
            raise DaemonUnreachable("daemon connection lost")

    request = SessionRequest(Broken(), OneShotOptions(cwd=str(tmp_path)), ("h", "0"))  # type: ignore[arg-type]
    with pytest.raises(DaemonUnreachable, match="connection lost"):
        request.finish(Style(io.StringIO()))


def test_joining_is_one_request_and_keeps_the_daemons_key_names() -> None:
    conn = Recorder()
    session = start(OneShotOptions(session="s1"), conn)
    assert conn.sent == [("initialize", {"id": "s1"})]
    assert session["key_env"] == ["K"] and session["last_seq"] == 7


def test_joining_with_a_provider_switch_takes_the_separate_requests() -> None:
    conn = Recorder()
    start(OneShotOptions(session="s1", provider="other"), conn)
    assert [method for method, _ in conn.sent] == ["initialize", "provider.use", "session.attach"]
    assert conn.sent[0] == ("initialize", None)


def test_a_daemon_that_refuses_the_combined_form_gets_the_separate_requests(
    tmp_path: Path,
) -> None:
    conn = Recorder(old=True)
    session = start(OneShotOptions(cwd=str(tmp_path), quiet=True), conn)
    methods = [method for method, _ in conn.sent]
    assert methods == ["initialize", "initialize", "session.create", "session.attach"]
    assert conn.sent[1] == ("initialize", None)
    assert session["session"] == "s1" and session["last_seq"] == 7


def test_a_daemon_that_ignores_the_session_param_gets_the_separate_requests(
    tmp_path: Path,
) -> None:
    conn = Recorder(ignores=True)
    session = start(OneShotOptions(cwd=str(tmp_path), quiet=True), conn)
    assert [method for method, _ in conn.sent] == ["initialize", "session.create", "session.attach"]
    assert session["session"] == "s1" and session["last_seq"] == 7


def test_key_names_come_from_the_users_files_not_the_projects(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "proj"
    (home / ".config" / "coding-agent").mkdir(parents=True)
    project.mkdir()
    profile = {"type": "openai", "endpoint": "http://x/v1", "model": "m"}

    def write(path: Path, key: str) -> None:
        path.write_text(json.dumps({"providers": {"p": {**profile, "api_key_env": key}}}))

    write(home / ".coding_harness.json", "GLOBAL_KEY")
    write(home / ".config" / "coding-agent" / "config.json", "LEGACY_KEY")
    write(project / ".local_coding_harness.json", "AWS_SECRET_ACCESS_KEY")
    assert key_names(home, project) == ["GLOBAL_KEY", "LEGACY_KEY", *SEARCH_KEY_VARIABLES]


def test_a_config_naming_no_key_still_sends_the_search_keys(tmp_path: Path) -> None:
    (tmp_path / ".coding_harness.json").write_text('{"providers": {"p": {"api_key_env": 3}}}')
    assert key_names(tmp_path, tmp_path) == list(SEARCH_KEY_VARIABLES)


def test_with_no_config_file_the_keys_discovery_looks_for_are_sent(tmp_path: Path) -> None:
    """As the daemon names them then, so first-run discovery at session.create sees a
    key exported only in the client's shell."""
    names = key_names(tmp_path / "home", tmp_path)
    assert names == [*DISCOVERY_KEY_VARIABLES, *SEARCH_KEY_VARIABLES]
    assert "OPENROUTER_API_KEY" in names


def test_the_clients_key_name_lists_are_the_daemons() -> None:
    from coding_harness.daemon.providers.discovery import KEY_VARIABLES
    from coding_harness.daemon.tools.web.search import SEARCH_KEY_VARIABLES as daemons

    assert tuple(SEARCH_KEY_VARIABLES) == tuple(daemons)
    assert tuple(DISCOVERY_KEY_VARIABLES) == tuple(KEY_VARIABLES)
