"""The approval question: y/n/s from a line, worded for an edit or for a command."""

from __future__ import annotations

import io

import pytest

from coding_harness.client.render.style import Style
from coding_harness.client.session.approval_prompt import (
    COMMAND_QUESTION,
    EDIT_HINT,
    QUESTION,
    ask,
    question,
)


def answer(lines: list[str], **kind: str) -> tuple[tuple[str, str] | None, str]:
    out = io.StringIO()
    feed = iter(lines)
    result = ask(Style(out), read_line=lambda: next(feed, ""), **kind)
    return result, out.getvalue()


def test_a_command_is_asked_as_a_command() -> None:
    result, shown = answer(["n\n"], kind="command")
    assert result == ("no", "")
    assert shown == COMMAND_QUESTION
    assert shown.startswith("Run this command?")


@pytest.mark.parametrize("kind", [{}, {"kind": "edit"}, {"kind": "something-newer"}])
def test_an_edit_and_any_other_kind_keep_the_edit_question(kind: dict[str, str]) -> None:
    result, shown = answer(["maybe\n", "s\n", "not now\n"], **kind)
    assert result == ("skip", "not now")
    assert shown.startswith(QUESTION + EDIT_HINT + "\n" + QUESTION)


def test_question_by_kind() -> None:
    assert question("command") == COMMAND_QUESTION
    assert question("edit") == question(None) == QUESTION


def test_an_edit_offers_revert_in_the_same_prompt() -> None:
    result, shown = answer(["r\n"], kind="edit")
    assert result == ("revert", "")
    assert shown == QUESTION
    assert "[r]evert it if the check fails" in QUESTION


def test_a_command_has_no_revert() -> None:
    result, shown = answer(["r\n", "y\n"], kind="command")
    assert result == ("yes", "")
    assert shown == COMMAND_QUESTION + "Please answer y, n or s.\n" + COMMAND_QUESTION
