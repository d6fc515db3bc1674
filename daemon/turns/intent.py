"""Intent routing: is a request a coding task, a general question, or both?

Three stages. Keyword patterns decide the clear cases for free: a file name
with a code extension or words like "traceback" mean coding; weather, news,
travel and the like mean a general question; documentation lookups and
requests that mix both kinds mean hybrid. A request the keywords find general,
or do not settle, that names something of the workspace (a file, a folder, a
symbol the code index knows: `workspace_terms.py`) is coding: "who is calling
div with zero?" is about the code. Text still unsettled is ambiguous: under
`agent.classify: "model"` one short model call (temperature 0, a four-token
budget that overrides the profile's own) answers with one word; otherwise, and
whenever that call fails or answers something else, the request goes to
coding, the route that keeps every tool available.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from coding_harness.daemon.agent.model_errors import ModelError
from coding_harness.daemon.agent.seams import JSONObject, Model, QuietSink, Usage
from coding_harness.daemon.config.generation import request_payload
from coding_harness.daemon.turns.workspace_terms import WorkspaceTerms
from coding_harness.protocol.vocabulary import ROUTES, Route

Source = Literal["keywords", "workspace", "model", "default", "option"]
CLASSIFIER_MAX_TOKENS = 4

LABELS: Mapping[Route, str] = {
    "general": "answered directly, no tools",
    "coding": "the tool loop",
    "hybrid": "the tool loop, with web results when search is on",
}


def _words(*phrases: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(phrases) + r")\b", re.IGNORECASE)


# A file name with a source extension, a traceback, or a code fence: nothing else matters.
_STRONG_CODING = re.compile(
    r"\b[\w./-]+\.(?:py|pyi|js|jsx|ts|tsx|go|rs|rb|java|kt|c|h|cc|cpp|hpp|cs|swift|rkt|"
    r"lisp|scm|el|php|sh|sql|toml|yaml|yml|json|ini|cfg|mk|md|txt|html|css)\b"
    r"|\bMakefile\b|traceback|stack ?trace|segfault|```",
    re.IGNORECASE,
)
_CODING = _words(
    r"bugs?", "fix", "debug", "refactor", "implement", "rename", "compile", "build",
    r"functions?", r"class(?:es)?", r"methods?", r"modules?", r"tests?", "unit test",
    "lint", "type ?check", r"exceptions?", "error", "crash", r"commits?", "merge",
    "pull request", "repo", "repository", "codebase", "code", "script", r"variables?",
    r"files?", "folder", "directory", "edit", "make check", "api endpoint",
    r"call ?graph", r"callers?", "calling", r"call ?sites?", r"callees?", "stack",
    r"imports?", r"dependenc(?:y|ies)", "defined", "definition", "implementation",
    r"branch(?:es)?", "diff", "git", "regex", "config", "endpoint", "schema",
    "null pointer", "undefined", "deprecation", "warnings?", r"benchmarks?", "profil(?:e|ing)",
    "memory leak", "deadlock", "refactoring", "type hints?", "docstrings?", "readme",
)  # fmt: skip
# Topics of the world: with nothing of the code in the request, a general question.
_GENERAL = _words(
    "weather", "forecast", "news", "headlines", "sports?", "recipe", "restaurants?",
    "movies?", "films?", "showtimes?", "hotels?", "flights?", "travel", "vacation",
    "capital of", "population of", "stock price", "exchange rate", "price of", "near me",
    "directions to", "time zone", "holiday", "world cup", "election",
)  # fmt: skip
# Questions that are general only when nothing else says what they are about:
# "where is the config loaded?" asks about the code.
_GENERAL_ASK = _words(
    "who is", "who was", "when is", "when was", "where is", "how far", "how old is",
    "tell me a joke",
)  # fmt: skip
_URL = re.compile(r"\bhttps?://[^\s<>\"']+", re.IGNORECASE)
_HYBRID = _words(
    "documentation", "docs for", "latest version", "release notes", "changelog",
    "api reference", "deprecated", "best practices?", "which library", "what library",
)  # fmt: skip


@dataclass(kw_only=True, slots=True, frozen=True)
class IntentDecision:
    route: Route
    source: Source

    def to_wire(self) -> JSONObject:
        return {"route": self.route, "source": self.source, "label": LABELS[self.route]}


def classify_keywords(text: str) -> Route | None:
    """The route the keyword patterns give, or None when the text is ambiguous."""
    if _STRONG_CODING.search(text):
        return "coding"
    if _HYBRID.search(text):
        return "hybrid"
    general, coding = bool(_GENERAL.search(text)), bool(_CODING.search(text))
    if general and coding:
        return "hybrid"
    if general:
        return "general"
    if coding:
        return "coding"
    if _GENERAL_ASK.search(text):
        return "general"
    return None


def parse_answer(answer: str) -> Route | None:
    """The first route named in a classifier's answer, whatever the case or punctuation."""
    found = re.search(r"\b(general|coding|hybrid)\b", answer, re.IGNORECASE)
    return None if found is None else route_named(found.group(1).lower())


def route_named(word: object) -> Route | None:
    """`word` as a `Route`, or None when it names none."""
    return next((route for route in ROUTES if route == word), None)


Ask = Callable[[str], Awaitable[str]]
"""Sends the classifier prompt for one request text; returns the model's raw answer."""
Terms = Callable[[], Awaitable[WorkspaceTerms]]
"""The names of the session's workspace, looked up only when the keywords need them."""


async def classify(
    text: str, mode: str, ask: Ask | None, terms: Terms | None = None
) -> tuple[IntentDecision, str | None]:
    """The decision for `text` under `mode`, and a notice when the model call failed.

    A request that names a web address never goes to the general route, which
    has no tools: it needs fetch_url to read the page.
    """
    decision, notice = await _classify(text, mode, ask, terms)
    if decision.route == "general" and _URL.search(text):
        decision = IntentDecision(route="hybrid", source=decision.source)
    return decision, notice


async def _classify(
    text: str, mode: str, ask: Ask | None, terms: Terms | None
) -> tuple[IntentDecision, str | None]:
    if mode == "off":
        return IntentDecision(route="coding", source="default"), None
    by_keywords = classify_keywords(text)
    unsettled = by_keywords in (None, "general")
    if unsettled and terms is not None and (await terms()).mention(text) is not None:
        return IntentDecision(route="coding", source="workspace"), None
    if by_keywords is not None:
        return IntentDecision(route=by_keywords, source="keywords"), None
    if mode != "model" or ask is None:
        return IntentDecision(route="coding", source="default"), None
    try:
        answer = await ask(text)
    except ModelError as exc:
        notice = f"intent classifier failed ({exc}); treating the request as coding"
        return IntentDecision(route="coding", source="default"), notice
    route = parse_answer(answer)
    if route is None:
        return IntentDecision(route="coding", source="default"), None
    return IntentDecision(route=route, source="model"), None


_SYSTEM = "You sort requests into categories. You answer with a single word."
_QUESTION = """\
Which category fits the request below? Answer GENERAL, CODING or HYBRID and nothing else.
GENERAL: a question about the world that needs no code and no files.
CODING: reading, writing, changing, running or debugging code or files in the project.
HYBRID: work on the project that needs facts from the web, such as library documentation.

Request: {text}

Category:"""


def model_asker(
    model: Model,
    model_id: str,
    generation: Mapping[str, Any],
    on_usage: Callable[[Usage], None],
) -> Ask:
    """An `Ask` that makes one tiny, deterministic call to `model`."""

    async def ask(text: str) -> str:
        own: JSONObject = {
            "model": model_id,
            "messages": [
                {"role": "system", "content": _SYSTEM},
                {"role": "user", "content": _QUESTION.format(text=text[:2000])},
            ],
        }
        payload = request_payload(own, classifier_generation(generation))
        reply = await model.complete(payload, QuietSink())
        if reply.usage is not None:
            on_usage(reply.usage)
        return reply.content

    return ask


def classifier_generation(generation: Mapping[str, Any]) -> JSONObject:
    """The profile's generation settings with the classifier's own budget winning."""
    chosen: JSONObject = {**generation, "temperature": 0}
    key = "max_completion_tokens" if "max_completion_tokens" in generation else "max_tokens"
    chosen[key] = CLASSIFIER_MAX_TOKENS
    return chosen
