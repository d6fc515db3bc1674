"""The words of the live table's state column, and which REPL lines go to the background."""

from __future__ import annotations

from coding_harness.client.commands.sessions_table import state_words
from coding_harness.client.repl.background_line import wanted


def test_the_state_says_what_the_session_waits_for() -> None:
    waiting = {"state": "waiting", "waiting_for": {"kind": "edit", "path": "calc.py"}}
    assert state_words(waiting) == "waiting: edit calc.py"
    assert state_words({"state": "queued", "model_queue": {"ahead": 2}}) == "queued: 2 ahead"
    assert state_words({"state": "idle", "last_turn": {"exit_code": 0}}) == "done"
    assert state_words({"state": "failed", "last_turn": {"exit_code": 2}}) == "failed (exit 2)"
    assert state_words({"state": "idle", "last_turn": {"exit_code": 130}}) == "cancelled"
    assert state_words({"state": "idle", "last_turn": None}) == "idle"
    assert state_words({"state": "running\x1b[2J"}) == "running\\x1b[2J"  # never raw


def test_a_line_ending_in_an_ampersand_goes_to_the_background() -> None:
    assert wanted("fix the flaky test &") and wanted("fix it&  ")
    assert not wanted("&") and not wanted("make && make check &&") and not wanted("R&D plan")
