"""`turn.finished` says why the agent loop stopped short of an answer (`stopped`).

Whole turns through the real `TurnRunner` over a scripted model: a model that
keeps calling tools past the iteration cap ends with `stopped: "iteration_cap"`;
a plain answer ends with `stopped: null`.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.turn_harness import TurnHarness, calls, say


def test_a_model_that_keeps_calling_tools_stops_at_the_iteration_cap(tmp_path: Path) -> None:
    replies = [
        calls(("list_dir", {"path": "."})),
        calls(("read_file", {"path": "a.txt"})),
        say("what I managed"),  # the summary call after the cap
    ]
    harness = TurnHarness(tmp_path, list(replies), agent={"max_iterations": 2})
    (harness.cwd / "a.txt").write_text("a\n")
    finished = harness.turn("look around", route="coding")
    assert finished["stopped"] == "iteration_cap"
    assert finished["reply"] == "what I managed"


def test_a_plain_answer_stops_for_no_reason(tmp_path: Path) -> None:
    harness = TurnHarness(tmp_path, [say("hello")])
    finished = harness.turn("say hello", route="coding")
    assert finished["stopped"] is None
    assert finished["reply"] == "hello"
