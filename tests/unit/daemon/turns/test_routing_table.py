"""The router measured: prompts as people type them into coding agents, and their routes.

The prompts are written the way users write them in the issue trackers of aider,
Claude Code, Codex and opencode (terse, lowercase, half a sentence, a pasted
traceback), not to suit the classifier. Each runs through the real router against a
real project (tests/support/invoicing_project.py) with a real code index built by
the daemon's own `IndexHub`, under the default `agent.classify: "keywords"`. A
question about the world stays general; one that names a file, a folder or a symbol
of the project never does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from coding_harness.daemon.index.hub import IndexHub
from coding_harness.daemon.turns.intent import classify
from coding_harness.daemon.turns.workspace_terms import WorkspaceTerms, workspace_terms
from tests.support.invoicing_project import write_project

GENERAL, CODING, HYBRID = "general", "coding", "hybrid"

TABLE: list[tuple[str, str]] = [
    # The three of the issue.
    ("who is calling div with zero?", CODING),
    ("how do I travel through the call graph?", HYBRID),
    ("news: did anything change in calc today?", CODING),
    # Questions about the world.
    ("what's the weather in berlin tomorrow?", GENERAL),
    ("who won the world cup in 2022", GENERAL),
    ("what is the capital of australia", GENERAL),
    ("any good restaurants near me that are open late?", GENERAL),
    ("news today about the election", GENERAL),
    ("whats the exchange rate usd to eur", GENERAL),
    ("who is the ceo of microsoft", GENERAL),
    ("when is the next public holiday in germany", GENERAL),
    ("tell me a joke", GENERAL),
    ("how far is the moon from earth", GENERAL),
    ("recommend a movie for tonight", GENERAL),
    ("cheap flights from london to lisbon in may", GENERAL),
    ("what's the population of canada", GENERAL),
    ("who is Linus Torvalds", GENERAL),
    ("where is the nearest pharmacy", GENERAL),
    ("news headlines about the rust 2024 edition", GENERAL),
    ("book a hotel in rome for friday", GENERAL),
    # Work on the project, by file, folder or symbol.
    ("fix the bug in calc.py", CODING),
    ("the tests are failing after my last change, can you take a look", CODING),
    ("add type hints to invoices/models.py", CODING),
    ("where is format_money defined", CODING),
    ("why does render_pdf crash on empty invoices", CODING),
    ("rename LineItem to InvoiceLine everywhere", CODING),
    ("explain how create_app wires the routes", CODING),
    ("can you write a unit test for total_due", CODING),
    (
        'Traceback (most recent call last):\n  File "server/app.py", line 9, in get_invoice\n'
        "NotImplementedError",
        CODING,
    ),
    ("make check fails with ZeroDivisionError", CODING),
    ("update the README with install instructions", CODING),
    ("what does deploy.sh do?", CODING),
    ("who calls get_invoice?", CODING),
    ("where is the config loaded?", CODING),
    ("summarize this codebase for me", CODING),
    ("refactor Cart to use the useCart hook", CODING),
    ("is there any dead code in invoices?", CODING),
    ("what changed in the last commit", CODING),
    ("run the tests", CODING),
    ("implement a /health endpoint", CODING),
    ("the invoice total is off by one cent when there's a discount", CODING),
    ("who is responsible for the invoices module?", CODING),
    ("when is format_money called?", CODING),
    ("where is Invoice serialized", CODING),
    ("update docs/usage.md with the new flags", CODING),
    ("why is the build so slow", CODING),
    ("write a commit message for my staged changes", CODING),
    ("create a new branch called fix-div and push it", CODING),
    ("generate docstrings for all public functions in calc", CODING),
    ("how do I install the project's dependencies", CODING),
    ("load_invoice just raises, stub it with a fake invoice for now", CODING),
    ("the server crashes on startup", CODING),
    ("where is the port set? settings or app?", CODING),
    ("what does mul return for strings", CODING),
    ("news flash: the frontend is broken again", CODING),
    ("travel time to render a pdf is 3s, make it faster", CODING),
    # Nothing says what it is about: the default route, which keeps every tool.
    ("hi", CODING),
    ("thanks, that worked!", CODING),
    ("continue", CODING),
    ("undo that", CODING),
    ("convert this project to use uv instead of pip", CODING),
    ("what is the difference between a list and a tuple in python", CODING),
    ("can you review my changes before I open a PR", CODING),
    # The web and the project together.
    ("what's the latest version of flask and do we need to upgrade?", HYBRID),
    ("is datetime.utcnow deprecated? we use it all over", HYBRID),
    ("what library should I use for pdf rendering", HYBRID),
    ("best practices for structuring a flask app like ours", HYBRID),
    ("weather api integration: add a forecast endpoint to the server", HYBRID),
    ("release notes for pytest 8, anything that breaks our tests?", HYBRID),
    ("search the changelog of httpx for the timeout change", HYBRID),
]


@pytest.fixture(scope="module")
def terms(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkspaceTerms]:
    root = write_project(tmp_path_factory.mktemp("invoicing"))

    async def build() -> WorkspaceTerms:
        hub = IndexHub(None)
        try:
            index = await hub.built(root)
            assert "format_money" in index.defined  # the real index, really built
            return await workspace_terms(hub, root)
        finally:
            await hub.close()

    yield asyncio.run(build())


def route_of(text: str, terms: WorkspaceTerms) -> str:
    async def known() -> WorkspaceTerms:
        return terms

    decision, _ = asyncio.run(classify(text, "keywords", None, known))
    return decision.route


def test_the_table_is_big_enough_and_covers_every_route() -> None:
    assert len(TABLE) >= 60
    assert {route for _, route in TABLE} == {GENERAL, CODING, HYBRID}


@pytest.mark.parametrize(("text", "route"), TABLE, ids=[t[:40] for t, _ in TABLE])
def test_each_prompt_takes_its_route(text: str, route: str, terms: WorkspaceTerms) -> None:
    assert route_of(text, terms) == route


def test_a_workspace_name_is_what_keeps_these_off_the_general_route(
    terms: WorkspaceTerms,
) -> None:
    """Without the workspace's names the keywords alone would answer them blind."""
    for text in ("news: did anything change in calc today?", "where is Invoice serialized"):
        assert route_of(text, WorkspaceTerms()) == GENERAL
        assert route_of(text, terms) == CODING


def test_common_words_a_project_defines_do_not_count_unless_typed_as_code() -> None:
    terms = WorkspaceTerms.of(["calc.py", "weather/today.py"], ["add", "time", "parse_date"])
    assert terms.mention("what time is it in tokyo") is None
    assert terms.mention("what's the weather today") is None
    assert terms.mention("why does add() overflow") == "add"
    assert terms.mention("is `time` cached") == "time"
    assert terms.mention("when is parse_date used") == "parse_date"
    assert terms.mention("what's in weather/today") == "weather/today"
    assert terms.mention("anything new in calc") == "calc"
