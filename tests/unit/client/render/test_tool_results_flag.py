"""The terminal reads a tool result by the daemon's `failed` flag, and by its wording
only when the flag is missing (a daemon from before it)."""

from __future__ import annotations

from coding_harness.client.render.tool_results import read_result

STALE = "stale base: 'old' does not match what 'calc.py' holds now (trailing whitespace aside)."


def test_a_flagged_refusal_whose_words_do_not_say_so_is_a_refusal() -> None:
    outcome = read_result("propose_edit", STALE, flag=True)
    assert outcome.kind == "refused"
    assert outcome.lines[0][1] == "red" and "stale base" in outcome.lines[0][0]


def test_an_unflagged_result_that_starts_like_an_error_ran() -> None:
    text = "Error: this is the first line of the file the model read\n"
    assert read_result("read_file", text, flag=False).kind == "ran"


def test_a_flagged_rejection_still_reads_as_not_written() -> None:
    text = "the user rejected this change to 'calc.py'; the file was not written."
    outcome = read_result("propose_edit", text, flag=True)
    assert (outcome.kind, outcome.path) == ("declined", "calc.py")


def test_without_the_flag_the_wording_decides() -> None:
    assert read_result("propose_edit", STALE).kind == "ran"
    assert read_result("run_shell", "refused: 'git' is not allowed here").kind == "refused"
