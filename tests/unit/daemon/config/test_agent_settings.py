"""The agent settings this area added: classify, context limits, services, list_ports."""

from __future__ import annotations

from typing import Any

import pytest

from coding_harness.daemon.config.settings import AgentSettings, parse_agent


def parse(raw: dict[str, Any]) -> tuple[AgentSettings, list[str]]:
    problems: list[str] = []
    return parse_agent(raw, lambda path: "~/.coding_harness.json", problems), problems


def test_defaults_keep_the_suite_free_of_classifier_calls() -> None:
    settings = AgentSettings()
    assert settings.classify == "keywords" and settings.context_limit == 32_000
    assert settings.compact_at == 0.8 and settings.services == () and settings.list_ports


def test_good_values() -> None:
    settings, problems = parse(
        {
            "classify": "model",
            "context_limit": 8192,
            "context_limits": {"local": 4096},
            "compact_at": 0.5,
            "services": [{"name": "Postgres", "port": 5432}, {"name": "API", "url": "http://x:1"}],
            "list_ports": False,
        }
    )
    assert problems == []
    assert settings.classify == "model" and settings.context_limit == 8192
    assert settings.context_limits == {"local": 4096} and settings.compact_at == 0.5
    assert settings.services == (("Postgres", "localhost:5432"), ("API", "http://x:1"))
    assert settings.list_ports is False


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("classify", "always", "must be one of keywords, model, off"),
        ("context_limit", 0, "must be a positive number"),
        ("context_limits", {"local": -1}, "must map provider names"),
        ("compact_at", 2, "must be a fraction"),
        ("services", [{"name": "db", "port": 70000}], "must be a list of"),
        ("services", "postgres", "must be a list of"),
        ("list_ports", "yes", "must be true or false"),
    ],
)
def test_bad_values_are_reported_and_the_default_kept(key: str, value: Any, said: str) -> None:
    settings, problems = parse({key: value})
    assert settings == AgentSettings()
    assert len(problems) == 1 and f"agent.{key} {said}" in problems[0]
