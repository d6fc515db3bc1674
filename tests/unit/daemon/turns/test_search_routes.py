"""Web search on the general and hybrid routes, in whole turns with a scripted model."""

from __future__ import annotations

from pathlib import Path

import pytest

from coding_harness.daemon.tools.web.search import SearchError, SearchResult
from coding_harness.daemon.turns import assemble as turn_setup
from tests.support.turn_harness import TurnHarness, say, tool_names

pytestmark = pytest.mark.usefixtures("home_in_tmp")


class FakeSearch:
    name = "fakesearch"

    def __init__(self, fail: bool = False) -> None:
        self.queries: list[str] = []
        self.fail = fail

    async def search(self, query: str, count: int) -> list[SearchResult]:
        self.queries.append(query)
        if self.fail:
            raise SearchError("fakesearch is down")
        return [SearchResult(title="Docs", url="https://docs.example/x", snippet="Use v2.")]


def searching(box: TurnHarness, monkeypatch: pytest.MonkeyPatch, engine: FakeSearch) -> None:
    monkeypatch.setattr(turn_setup, "engine_named", lambda name, env: engine)
    box.session.options.search_enabled = True


def test_a_general_question_gets_search_results_in_front(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box, engine = TurnHarness(tmp_path, [say("Sunny, says Docs.")]), FakeSearch()
    searching(box, monkeypatch, engine)
    box.turn("weather forecast for Lyon")
    question = box.sent()["messages"][-1]["content"]
    assert engine.queries == ["weather forecast for Lyon"]
    assert question.startswith("[web search results from fakesearch")
    assert "untrusted data" in question and question.endswith("Request: weather forecast for Lyon")
    assert "tools" not in box.sent()


def test_hybrid_gets_results_and_the_tool_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box, engine = TurnHarness(tmp_path, [say("Upgraded.")]), FakeSearch()
    searching(box, monkeypatch, engine)
    box.turn("check the latest version of httpx and upgrade")
    assert box.events("intent")[0]["route"] == "hybrid"
    assert "https://docs.example/x" in box.sent()["messages"][-1]["content"]
    assert "web_search" in tool_names(box.sent())
    assert "https://docs.example/x" in box.session.history[0]["content"]  # what it was sent


def test_a_failed_search_answers_without_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = TurnHarness(tmp_path, [say("I think sunny.")])
    searching(box, monkeypatch, FakeSearch(fail=True))
    finished = box.turn("weather forecast for Lyon")
    assert finished["exit_code"] == 0
    assert box.sent()["messages"][-1]["content"] == "weather forecast for Lyon"
    assert any("fakesearch is down" in n["message"] for n in box.events("notice"))


def test_coding_never_searches_up_front(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box, engine = TurnHarness(tmp_path, [say("ok")]), FakeSearch()
    searching(box, monkeypatch, engine)
    box.turn("fix calc.py")
    assert engine.queries == [] and box.sent()["messages"][-1]["content"] == "fix calc.py"


def test_a_request_carrying_a_secret_is_not_sent_to_the_search_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box, engine = TurnHarness(tmp_path, [say("It is set.")]), FakeSearch()
    searching(box, monkeypatch, engine)
    box.session.key_env["GITHUB_TOKEN"] = "ghp_0123456789abcdefXYZ"
    box.turn("weather forecast for Lyon, token ghp_0123456789abcdefXYZ")
    assert engine.queries == []
    [notice] = [e["message"] for e in box.events("notice") if "search" in e["message"]]
    assert "web search skipped" in notice and "GITHUB_TOKEN" in notice
