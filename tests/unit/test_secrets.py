"""Which variables count as secrets, their values, redaction, and agent.env_pass."""

from __future__ import annotations

import pytest

from coding_harness.daemon.secrets import REDACTED, Secrets, collect_secrets, looks_secret
from coding_harness.daemon.settings import AgentSettings, parse_agent


def test_profile_key_variables_count_whatever_they_are_called() -> None:
    daemon_env = {"MODEL_PASS": "from-the-daemon-1", "PATH": "/bin", "GH_TOKEN": "ghp-123456789"}
    client_env = {"MODEL_PASS": "from-the-client-2"}
    found = collect_secrets(["MODEL_PASS"], client_env, daemon_env)
    assert {"MODEL_PASS", "GH_TOKEN", "BRAVE_SEARCH_API_KEY", "EXA_API_KEY"} <= found.names
    assert "PATH" not in found.names
    assert set(found.values) == {"from-the-daemon-1", "from-the-client-2", "ghp-123456789"}


def test_short_values_are_not_treated_as_secrets() -> None:
    assert collect_secrets(["K"], {"K": "abc"}).values == ()


def test_redaction_replaces_every_known_value_longest_first() -> None:
    secrets = Secrets(names=frozenset(), values=("sk-live-abcdef123", "abcdef123"))
    text = "key sk-live-abcdef123 and abcdef123"
    assert secrets.redact(text) == f"key {REDACTED} and {REDACTED}"
    assert secrets.found_in(text) and not secrets.found_in("nothing here")


@pytest.mark.parametrize(
    ("name", "secret"),
    [("OPENAI_API_KEY", True), ("db_password", True), ("MY_CREDENTIALS", True),
     ("PATH", False), ("LANG", False)],
)  # fmt: skip
def test_names_that_say_secret(name: str, secret: bool) -> None:
    assert looks_secret(name) is secret


def test_env_pass_takes_a_list_of_names() -> None:
    problems: list[str] = []
    good = parse_agent({"env_pass": ["PROJECT_MODE"]}, lambda path: "f", problems)
    assert good.env_pass == ("PROJECT_MODE",) and problems == []
    bad = parse_agent({"env_pass": ["NOT A NAME"]}, lambda path: "f", problems)
    assert bad == AgentSettings() and "agent.env_pass must be a list" in problems[0]
