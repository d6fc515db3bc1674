"""`--mode` on the command line, and what the REPL keeps of the session's mode: the
prompt's tag, `mode.changed`, and the plan offered after a read-only turn it started."""

from __future__ import annotations

import pytest

from coding_harness.client.args import UsageError, _fast_parse, build_parser, parse_oneshot
from coding_harness.client.repl.modes import ModeKeeper, session_mode


@pytest.mark.parametrize(
    "argv", [["--mode", "read-only", "-p", "x"], ["--mode=accept-edits", "fix", "it"]]
)
def test_the_fast_reader_and_argparse_agree_on_mode(argv: list[str]) -> None:
    fast = _fast_parse(argv)
    assert fast is not None and fast.mode in ("read-only", "accept-edits")
    assert vars(fast) == vars(build_parser().parse_args(argv))


def test_an_unknown_mode_is_a_usage_error_naming_the_modes() -> None:
    assert _fast_parse(["--mode", "yolo", "x"]) is None  # left to argparse, which refuses
    with pytest.raises(UsageError, match=r"ask.*accept-edits.*read-only"):
        parse_oneshot(["--mode", "yolo", "-p", "x"])


def test_yes_and_read_only_contradict() -> None:
    with pytest.raises(UsageError, match="contradict"):
        parse_oneshot(["-y", "--mode", "read-only", "-p", "x"])
    assert parse_oneshot(["-y", "--mode", "accept-edits", "-p", "x"]).yes


def test_the_prompt_tag_follows_mode_changed() -> None:
    keeper = ModeKeeper(session_mode({"options": {"mode": "ask"}}))
    assert keeper.tag() == ""
    line = keeper.changed({"mode": "read-only", "client": "c2(harness-repl, pid 9)"})
    assert line == "mode: read-only (set by c2(harness-repl, pid 9))"
    assert keeper.tag() == "[read-only] "
    assert session_mode({"mode": "accept-edits"}) == "accept-edits"
    assert session_mode({}) == "ask"  # an older daemon says nothing of modes


def test_the_plan_is_offered_only_after_an_own_read_only_turn_that_ended_well() -> None:
    keeper = ModeKeeper("read-only")
    keeper.started("t-1", own=False)
    assert not keeper.finished("t-1", 0)  # typed in another terminal
    keeper.started("t-2", own=True)
    assert not keeper.finished("t-2", 1)  # failed
    keeper.started("t-3", own=True)
    assert keeper.finished("t-3", 0) and keeper.offering
    keeper.mode = "ask"
    keeper.started("t-4", own=True)
    assert not keeper.finished("t-4", 0)  # not read-only any more


@pytest.mark.parametrize(
    ("line", "action"),
    [
        ("a", ("switch", "accept-edits")),
        ("Y", ("switch", "ask")),
        ("n", ("keep", "")),
        ("x", ("hint", "")),
        ("look at tests first", ("task", "look at tests first")),
    ],
)
def test_answers_to_the_plan_question(line: str, action: tuple[str, str]) -> None:
    keeper = ModeKeeper("read-only")
    keeper.offering = True
    assert keeper.answer(line) == action
    assert keeper.offering == (action[0] == "hint")
