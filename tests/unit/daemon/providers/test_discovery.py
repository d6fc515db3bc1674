"""First-run discovery's parsing and choices, and the REPL's save offer (issue 11, item 8)."""

from __future__ import annotations

import io
import json
import stat
from pathlib import Path

import pytest

from coding_harness.client.render.style import Style
from coding_harness.client.repl.first_run import offer_to_save, saved_config, write_new
from coding_harness.daemon.config.loader import load_config, with_discovery
from coding_harness.daemon.providers.discovery import (
    KEY_VARIABLES,
    LOCAL_SERVERS,
    Discovery,
    FoundServer,
    _model_ids,
    find_keys,
    probe_targets,
)
from coding_harness.protocol.config_files import DISCOVERY_KEY_VARIABLES

SESSION = {
    "notice": "no config file: using ollama · m",
    "discovered": {
        "profile": "ollama",
        "config": {
            "type": "openai",
            "endpoint": "http://localhost:11434/v1/chat/completions",
            "model": "m",
        },
    },
}


def test_probe_targets_default_to_the_usual_servers_and_take_only_valid_ports() -> None:
    assert [t.port for t in probe_targets({})] == [port for _, _, port in LOCAL_SERVERS]
    assert probe_targets({"CODING_HARNESS_PROBE_PORTS": "none"}) == ()
    spec = "a=1234, Bad=1, b=99999, c=x, evil.example.com=80, d=8080"
    assert [(t.name, t.port) for t in probe_targets({"CODING_HARNESS_PROBE_PORTS": spec})] == [
        ("a", 1234),
        ("d", 8080),
    ]


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"not json",
        b"[]",
        b'{"data": {}}',
        b'{"data": [1, {"id": 2}, {"id": "a b"}]}',
        b"[" * 100_000 + b"]" * 100_000,  # nested past the JSON parser's recursion limit
    ],
    ids=["empty", "not json", "a list", "data not a list", "bad ids", "nested too deeply"],
)
def test_answers_that_list_no_usable_model_list_nothing(body: bytes) -> None:
    assert _model_ids(body) == ()


def test_an_embedding_model_is_not_chosen_when_another_is_listed() -> None:
    ids = _model_ids(b'{"data": [{"id": "nomic-embed-text"}, {"id": "qwen3"}, {"id": "qwen3"}]}')
    server = FoundServer(name="ollama", label="Ollama", port=11434, models=ids)
    assert ids == ("nomic-embed-text", "qwen3") and server.model == "qwen3"


def test_keys_come_in_a_fixed_order_from_either_environment() -> None:
    keys = find_keys({"GROQ_API_KEY": "g", "OPENAI_API_KEY": ""}, {"OPENAI_API_KEY": "o"})
    assert [k.name for k in keys] == ["openai", "groq"]


def test_a_server_wins_over_a_key_and_a_config_file_wins_over_both(tmp_path: Path) -> None:
    found = Discovery(
        servers=(FoundServer(name="vllm", label="vLLM", port=8000, models=("m",)),),
        keys=find_keys({"OPENAI_API_KEY": "o"}),
    )
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    home.mkdir(), cwd.mkdir()
    bare = with_discovery(load_config(home, cwd), found)
    assert bare.default_provider == "vllm" and {"vllm", "openai", "local"} <= set(bare.providers)
    assert "OPENAI_API_KEY" in bare.key_env_names()
    (home / ".coding_harness.json").write_text(json.dumps({"quiet": True}))
    filed = with_discovery(load_config(home, cwd), found)
    assert filed.discovered is None and list(filed.providers) == ["local"]
    assert "OPENAI_API_KEY" not in filed.key_env_names()


def test_write_new_never_replaces_a_file(tmp_path: Path) -> None:
    path = tmp_path / ".coding_harness.json"
    assert write_new(path, {"a": 1}) and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not write_new(path, {"b": 2})
    assert json.loads(path.read_text()) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary left


@pytest.mark.parametrize("answer", ["", "n", "no", "maybe"])
def test_anything_but_yes_writes_nothing(tmp_path: Path, answer: str) -> None:
    assert offer_to_save(SESSION, Style(io.StringIO()), lambda _: answer, tmp_path) is None
    assert not (tmp_path / ".coding_harness.json").exists()


def test_no_terminal_or_an_existing_file_asks_nothing(tmp_path: Path) -> None:
    def ask(question: str) -> str:
        raise AssertionError("asked")

    assert offer_to_save(SESSION, Style(io.StringIO()), None, tmp_path) is None
    assert not (tmp_path / ".coding_harness.json").exists()
    (tmp_path / ".coding_harness.json").write_text("{}")
    assert offer_to_save(SESSION, Style(io.StringIO()), ask, tmp_path) is None
    assert (tmp_path / ".coding_harness.json").read_text() == "{}"


def test_yes_writes_the_profile_and_default(tmp_path: Path) -> None:
    out = io.StringIO()
    written = offer_to_save(SESSION, Style(out), lambda _: "Y", tmp_path)
    assert written == tmp_path / ".coding_harness.json"
    assert json.loads(written.read_text()) == saved_config(SESSION["discovered"])
    assert f"saved: {written}" in out.getvalue()


def test_the_clients_list_of_key_variables_is_the_daemons() -> None:
    """A client sends these before it has asked the daemon anything (with no config)."""
    assert KEY_VARIABLES == DISCOVERY_KEY_VARIABLES
