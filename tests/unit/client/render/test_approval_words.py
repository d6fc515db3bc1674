"""How an approval's answer reads at a terminal: here, elsewhere, from another machine."""

from __future__ import annotations

from coding_harness.client.render.approval_words import resolved_text


def test_an_answer_given_here_is_just_the_word() -> None:
    assert resolved_text({"decision": "yes"}, mine=True) == "approved"


def test_an_answer_from_another_terminal_names_the_program() -> None:
    data = {"decision": "no", "by": {"id": "c3", "name": "harness-repl", "pid": 4242}}
    said = resolved_text(data, mine=False)
    assert said == "rejected in another terminal (harness REPL, pid 4242)"


def test_an_answer_from_another_machine_names_the_person() -> None:
    data = {
        "decision": "yes",
        "answered_by": "bob@desk",
        "by": {"id": "hub-17", "name": "bob@desk on desk", "pid": None},
    }
    assert resolved_text(data, mine=False) == "approved by bob@desk on desk, through the hub"


def test_a_person_name_cannot_carry_a_terminal_control() -> None:
    data = {"decision": "yes", "by": {"id": "hub-1", "name": "eve\x1b[2J@x", "pid": None}}
    assert "\x1b" not in resolved_text(data, mine=False)
