"""Whole turns through the real `TurnRunner`, with a scripted model playing a weak one.

Routing, the system prompt (services, AGENTS.md), `/summary` and forced routes:
each test asserts what the model was told (`TurnHarness` is in tests/support).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psutil
import pytest

from coding_harness.daemon.agent.model_errors import ModelRequestRejected
from coding_harness.daemon.agent.prompts import GENERAL_PROMPT, SUMMARY_TASK
from coding_harness.daemon.turns import local_services as services
from coding_harness.protocol import errors
from tests.support.turn_harness import TurnHarness, calls, say, tool_names

pytestmark = pytest.mark.usefixtures("home_in_tmp")


# -- routing -----------------------------------------------------------------------


def test_a_coding_request_goes_to_the_tool_loop_by_keyword(tmp_path: Path) -> None:
    box = TurnHarness(tmp_path, [say("Fixed.")])
    finished = box.turn("fix the bug in calc.py")
    assert finished["exit_code"] == 0 and finished["reply"] == "Fixed."
    assert box.events("intent") == [
        {"route": "coding", "source": "keywords", "label": "the tool loop"}
    ]
    assert "commit_plan" in tool_names(box.sent()) and "read_file" in tool_names(box.sent())
    assert f"Workspace: {box.cwd}" in box.system()
    assert len(box.model.payloads) == 1  # no classifier call


def test_a_general_question_is_answered_without_tools_but_with_the_conversation(
    tmp_path: Path,
) -> None:
    box = TurnHarness(tmp_path, [say("Sunny."), say("Done.")])
    box.turn("fix calc.py")  # some history first
    box.model.replies = [say("Mild and dry.")]
    finished = box.turn("what is the weather forecast for Paris tomorrow?")
    payload = box.sent()
    assert finished["reply"] == "Mild and dry."
    assert "tools" not in payload
    assert payload["messages"][0]["content"] == GENERAL_PROMPT
    assert payload["messages"][1:3] == [
        {"role": "user", "content": "fix calc.py"},
        {"role": "assistant", "content": "Sunny."},
    ]
    assert [m["role"] for m in payload["messages"]] == ["system", "user", "assistant", "user"]
    assert box.events("intent")[-1]["route"] == "general"
    assert box.session.history[-1] == {"role": "assistant", "content": "Mild and dry."}


def test_ambiguous_text_under_model_mode_asks_one_word_with_a_tiny_budget(tmp_path: Path) -> None:
    box = TurnHarness(
        tmp_path,
        [say("General."), say("It was 1969.")],
        agent={"classify": "model"},
        generation={"max_tokens": 2048, "temperature": 0.7},
    )
    box.turn("tell me about the moon landing")
    ask = box.sent(0)
    assert ask["max_tokens"] == 4 and ask["temperature"] == 0
    assert "tools" not in ask and "Request: tell me about the moon landing" in str(ask["messages"])
    assert box.events("intent") == [
        {"route": "general", "source": "model", "label": "answered directly, no tools"}
    ]
    assert "tools" not in box.sent(1)
    assert box.sent(1)["max_tokens"] == 2048  # the profile's own budget for the answer


def test_a_rambling_classifier_answer_means_coding(tmp_path: Path) -> None:
    box = TurnHarness(
        tmp_path, [say("Well, it depends on"), say("ok")], agent={"classify": "model"}
    )
    box.turn("tell me something")
    assert box.events("intent")[0]["source"] == "default"
    assert box.events("intent")[0]["route"] == "coding"
    assert box.sent(1)["tools"]


def test_a_failed_classifier_call_defaults_to_coding_and_says_so(tmp_path: Path) -> None:
    refused = ModelRequestRejected("model not found", endpoint="https://models.example/v1")
    box = TurnHarness(tmp_path, [refused, say("ok")], agent={"classify": "model"})
    finished = box.turn("tell me something")
    assert finished["exit_code"] == 0
    assert box.events("intent")[0] == {
        "route": "coding",
        "source": "default",
        "label": "the tool loop",
    }
    assert any("classifier failed" in n["message"] for n in box.events("notice"))


def test_a_forced_route_skips_the_classifier(tmp_path: Path) -> None:
    box = TurnHarness(tmp_path, [say("ok")], agent={"classify": "model"})
    box.turn("tell me something", route="coding")
    assert len(box.model.payloads) == 1 and box.sent()["tools"]
    assert box.events("intent")[0]["source"] == "option"


def test_classify_off_never_routes_away_from_coding(tmp_path: Path) -> None:
    box = TurnHarness(tmp_path, [say("ok")], agent={"classify": "off"})
    box.turn("what is the weather forecast?")
    assert box.events("intent")[0] == {
        "route": "coding",
        "source": "default",
        "label": "the tool loop",
    }


def test_a_bad_route_option_is_refused_at_submit(tmp_path: Path) -> None:
    box = TurnHarness(tmp_path, [])
    with pytest.raises(errors.InvalidParams, match="route"):
        box.turn("hi", route="poetry")


# -- summary -----------------------------------------------------------------------


def test_summary_mode_reads_with_read_only_tools_and_a_fixed_task(tmp_path: Path) -> None:
    write = {"path": "x.py", "old": "", "new": "x"}
    replies = [calls(("list_dir", {"path": "."})), calls(("propose_edit", write)), say("- a")]
    box = TurnHarness(tmp_path, replies)
    (box.cwd / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    finished = box.turn("/summary", mode="summary")
    assert finished["reply"] == "- a"
    assert tool_names(box.sent(0)) == ["read_file", "list_dir", "grep"]
    assert box.sent(0)["messages"][-1] == {"role": "user", "content": SUMMARY_TASK}
    refused = box.sent(2)["messages"][-1]["content"]
    assert "'propose_edit' is not available here" in refused
    assert not (box.cwd / "x.py").exists()


# -- the system prompt -------------------------------------------------------------


def test_agents_md_is_given_as_project_instructions(tmp_path: Path) -> None:
    box = TurnHarness(tmp_path, [say("ok")])
    (box.cwd / "AGENTS.md").write_text("Run `make test` before you finish.\n")
    box.turn("fix calc.py")
    assert "Project instructions, from the workspace's AGENTS.md" in box.system()
    assert "<project-instructions>\nRun `make test` before you finish.\n" in box.system()


def test_agents_md_is_capped_and_a_link_out_of_the_workspace_is_ignored(tmp_path: Path) -> None:
    box = TurnHarness(tmp_path, [say("ok"), say("ok")])
    (box.cwd / "AGENTS.md").write_text("x" * 20_000)
    box.turn("fix calc.py")
    assert "x" * 8_000 in box.system() and "x" * 8_001 not in box.system()
    assert "AGENTS.md was cut off here" in box.system()
    outside = tmp_path / "secret.md"
    outside.write_text("leaked")
    (box.cwd / "AGENTS.md").unlink()
    (box.cwd / "AGENTS.md").symlink_to(outside)
    box.turn("fix calc.py")
    assert "leaked" not in box.system() and "project-instructions" not in box.system()


def test_the_model_is_told_which_ports_are_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(services, "listening_ports", lambda: [5432, 8080, 41000])
    agent = {"list_ports": True, "services": [{"name": "Postgres", "port": 5432}]}
    box = TurnHarness(tmp_path, [say("ok")], agent=agent)
    box.turn("fix calc.py")
    system = box.system()
    assert "never start a server on these ports" in system
    assert "- Postgres: localhost:5432" in system
    assert "- other listening ports: 8080, 41000" in system


def test_listening_ports_are_left_out_when_the_system_refuses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(kind: str) -> list[Any]:
        raise psutil.AccessDenied()

    monkeypatch.setattr(psutil, "net_connections", refuse)
    monkeypatch.setattr(services, "_PROC_TABLES", (Path("/nonexistent/tcp"),))
    monkeypatch.setattr(services, "_last_ports", (float("-inf"), []))
    assert services.listening_ports() == []
    assert services.describe([], []) == ""


def test_listening_ports_read_from_proc_tables_and_reused_briefly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = tmp_path / "tcp"
    table.write_text(
        "  sl  local_address rem_address   st tx_queue rx_queue\n"
        "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000\n"  # 127.0.0.1:8080 LISTEN
        "   1: 0100007F:D431 0100007F:1F90 01 00000000:00000000\n"  # an established one
    )
    monkeypatch.setattr(services, "_PROC_TABLES", (table, tmp_path / "tcp6-absent"))
    monkeypatch.setattr(services, "_last_ports", (float("-inf"), []))
    assert services.listening_ports() == [8080]
    table.write_text(table.read_text().replace("1F90 00000000:0000 0A", "1F91 00000000:0000 0A"))
    assert services.listening_ports() == [8080]  # within the time-to-live: reused
