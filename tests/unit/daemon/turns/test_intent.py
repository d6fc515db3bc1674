"""Intent classification: the keyword stage, the one-word answer, the fallbacks."""

from __future__ import annotations

import asyncio

import pytest

from coding_harness.daemon.agent.model_errors import ModelServerError
from coding_harness.daemon.turns.intent import (
    IntentDecision,
    classifier_generation,
    classify,
    classify_keywords,
    parse_answer,
)

# Every prompt the integration tests script replies for: none may cost a model call.
SCRIPTED_PROMPTS = [
    "fix the bug in calc.py", "explain what main.py does", "say something", "say more",
    "say hello", "hi", "slow please", "what was the word?", "remember the word kumquat",
    "fix calc.py", "what does add do?", "and now?", "go", "carry on", "again", "read it",
    "look", "a", "b", "fix it", "fix", "explain", "fix calc", "say hi",
]  # fmt: skip


@pytest.mark.parametrize("text", SCRIPTED_PROMPTS)
def test_scripted_prompts_never_reach_the_general_route(text: str) -> None:
    assert classify_keywords(text) in (None, "coding")
    decision, notice = asyncio.run(classify(text, "keywords", None))
    assert decision.route == "coding" and notice is None


@pytest.mark.parametrize(
    ("text", "route"),
    [
        ("fix the bug in calc.py", "coding"),
        ("explain what main.py does", "coding"),
        ("why does this Traceback mention None?", "coding"),
        ("refactor the parser module", "coding"),
        ("what is the weather forecast for Lyon?", "general"),
        ("who is the president of Finland", "general"),
        ("find a recipe for lentil soup", "general"),
        ("check the latest version of httpx and upgrade", "hybrid"),
        ("what's the news about the crash of that flight", "hybrid"),
        ("weather in calc.py is a variable name", "coding"),  # a file name settles it
        ("prefix these words", None),  # no whole word matches
        ("tell me a story", None),
    ],
)
def test_keyword_stage(text: str, route: str | None) -> None:
    assert classify_keywords(text) == route


@pytest.mark.parametrize(
    ("answer", "route"),
    [
        ("GENERAL", "general"),
        ("  hybrid.", "hybrid"),
        ("**Coding**", "coding"),
        ("The answer is GENERAL", "general"),
        ("I cannot tell", None),
        ("", None),
    ],
)
def test_parse_answer(answer: str, route: str | None) -> None:
    assert parse_answer(answer) == route


def test_the_classifiers_budget_wins_over_the_profile() -> None:
    assert classifier_generation({"max_tokens": 4096, "temperature": 1, "top_p": 0.9}) == {
        "max_tokens": 4,
        "temperature": 0,
        "top_p": 0.9,
    }
    newer = classifier_generation({"max_completion_tokens": 999})
    assert newer == {"max_completion_tokens": 4, "temperature": 0}


def test_model_mode_asks_only_for_ambiguous_text() -> None:
    asked: list[str] = []

    async def ask(text: str) -> str:
        asked.append(text)
        return "HYBRID"

    clear, _ = asyncio.run(classify("fix calc.py", "model", ask))
    vague, _ = asyncio.run(classify("tell me a story", "model", ask))
    assert clear == IntentDecision(route="coding", source="keywords")
    assert vague == IntentDecision(route="hybrid", source="model")
    assert asked == ["tell me a story"]


def test_a_failing_classifier_falls_back_to_coding_with_a_notice() -> None:
    async def ask(text: str) -> str:
        raise ModelServerError("boom", endpoint="http://x")

    decision, notice = asyncio.run(classify("tell me a story", "model", ask))
    assert decision == IntentDecision(route="coding", source="default")
    assert notice is not None and "boom" in notice


def test_off_mode_ignores_keywords() -> None:
    decision, _ = asyncio.run(classify("weather forecast", "off", None))
    assert decision == IntentDecision(route="coding", source="default")


@pytest.mark.parametrize("mode", ["keywords", "model"])
def test_a_request_with_a_web_address_gets_a_route_that_can_fetch_it(mode: str) -> None:
    async def ask(text: str) -> str:
        return "GENERAL"

    text = "what does the news at https://news.example/today say"
    decision, _ = asyncio.run(classify(text, mode, ask))
    assert decision.route == "hybrid"
    plain, _ = asyncio.run(classify("what does the news say today", mode, ask))
    assert plain.route == "general"
