"""The start of a turn: which route it takes, and the request the model is sent.

A route forced by the submit (`options.route`), a `/summary` or a skill wins;
otherwise `intent.classify` decides under `agent.classify`. The request is
the user's text, or the fixed summary task, or a skill's instructions with
the task, and, on the general and hybrid routes with a search engine, the
web results for the text, framed as information and never as instructions.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from coding_harness.daemon.agent.prompts import SUMMARY_TASK
from coding_harness.daemon.agent.seams import EventSink
from coding_harness.daemon.tools.web.search import SearchEngine, SearchError, format_results
from coding_harness.daemon.turns.intent import Ask, IntentDecision, Terms, classify
from coding_harness.daemon.turns.skills import find_skill, skill_request
from coding_harness.protocol.methods import EventKind
from coding_harness.protocol.vocabulary import Route

SEARCH_RESULTS = 5
SUMMARY_MODE = "summary"


@dataclass(kw_only=True, slots=True, frozen=True)
class TurnKind:
    """What the submit asked for beyond its text."""

    route: Route | None = None
    mode: str | None = None  # "summary"
    skill: str | None = None


async def decide_route(
    text: str,
    kind: TurnKind,
    classify_mode: str,
    ask: Ask | None,
    events: EventSink,
    terms: Terms | None = None,
) -> IntentDecision:
    """The route, published to every client as an `intent` event; `terms`: the names of
    the workspace, for a request the keywords find general or leave open."""
    if kind.route is not None:
        decision = IntentDecision(route=kind.route, source="option")
    elif kind.mode == SUMMARY_MODE or kind.skill:
        decision = IntentDecision(route="coding", source="option")
    else:
        decision, notice = await classify(text, classify_mode, ask, terms)
        if notice:
            events.emit(EventKind.NOTICE, {"message": notice})
    events.emit(EventKind.INTENT, decision.to_wire())
    return decision


def request_text(text: str, kind: TurnKind, *, home: Path, cwd: Path) -> str:
    """The request before any search results: the text, the summary task, or a skill."""
    if kind.mode == SUMMARY_MODE:
        return SUMMARY_TASK
    if kind.skill:
        skill = find_skill(home, cwd, kind.skill)
        if skill is None:  # removed since the submit was accepted
            return text
        task = "" if text.strip() == f"/{kind.skill}" else text
        return skill_request(skill, task)
    return text


async def with_search(
    text: str, route: Route, search: SearchEngine | None, events: EventSink
) -> str:
    """`text` with web results in front, on the general and hybrid routes when search is on."""
    if search is None or route == "coding":
        return text
    query = text.strip()[:300]
    try:
        results = await search.search(query, SEARCH_RESULTS)
    except SearchError as exc:
        events.emit(EventKind.NOTICE, {"message": f"web search failed ({exc}); answering without"})
        return text
    return f"{format_results(search.name, query, results)}\n\nRequest: {text}"
