"""A history a stopped turn left: every tool call answered, no request left hanging."""

from __future__ import annotations

from pathlib import Path

from coding_harness.daemon.agent.history import answer_trailing_request
from coding_harness.daemon.agent.seams import JSONObject
from coding_harness.daemon.turns.interrupted import recover_writes

NOTE = "interrupted: the user cancelled the turn before this call finished"


def test_a_request_left_unanswered_gets_the_note_as_its_answer() -> None:
    history: list[JSONObject] = [{"role": "user", "content": "what is a monad?"}]
    assert answer_trailing_request(history, NOTE)
    assert history[-1] == {"role": "assistant", "content": NOTE}


def test_an_answered_history_is_left_as_it_is() -> None:
    history: list[JSONObject] = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
    ]
    assert not answer_trailing_request(history, NOTE)
    assert not answer_trailing_request([], NOTE)
    assert len(history) == 2


def test_recovering_a_cancelled_turn_never_leaves_two_requests_in_a_row(tmp_path: Path) -> None:
    working: list[JSONObject] = [
        {"role": "system", "content": "prompt"},
        {"role": "user", "content": "first question"},
    ]
    assert recover_writes(working, [], "t-1", tmp_path, NOTE) == []
    working.append({"role": "user", "content": "second question"})
    roles = [m["role"] for m in working]
    assert roles == ["system", "user", "assistant", "user"]
