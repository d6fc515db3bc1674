"""`harness --help` is complete, and the fast command-line reader agrees with argparse."""

from __future__ import annotations

import os
import re

import pytest

from coding_harness.client.args import (
    SUBCOMMANDS,
    UsageError,
    _fast_parse,
    build_parser,
    parse_oneshot,
)
from coding_harness.client.session.text_input import BadInput, decode_input, utf8_problem


def help_text() -> str:
    return build_parser().format_help()


def test_help_names_every_subcommand_and_daemon_action() -> None:
    text = help_text()
    for name in SUBCOMMANDS:
        assert f"  {name}" in text, name
    for usage in (
        "daemon start|stop|restart",
        "daemon status",
        "daemon logs [-n N] [-f]",
        "daemon install|uninstall",
        "completions bash|zsh|fish",
        "attach [ID]",
        "approve [ID]",
    ):
        assert usage in text, usage


def test_help_lists_the_exit_codes_environment_and_keys() -> None:
    text = help_text()
    for code, meaning in (
        ("0", "done"),
        ("1", "model or network error"),
        ("2", "the check failed"),
        ("3", "rejected or skipped"),
        ("4", "daemon could not be reached"),
        ("5", "bad arguments"),
        ("130", "interrupted"),
    ):
        assert any(line.split()[:1] == [code] and meaning in line for line in text.splitlines()), (
            code
        )
    for word in ("NO_COLOR", "CODING_AGENT_PROVIDER", "~/.coding_agent_history", "Ctrl-R"):
        assert word in text


def test_every_flag_has_help_and_the_text_fits_80_columns() -> None:
    parser = build_parser()
    for action in parser._actions:
        assert action.help, action.option_strings
    assert max(len(line) for line in help_text().splitlines()) <= 80


FAST = [
    ["-q", "-p", "hi"],
    ["fix", "the", "bug"],
    ["-p", "a", "--prompt", "b", "--prompt=c", "-y"],
    ["--provider", "fake", "--model=m:7b", "--cwd", "/tmp", "--session", "s-1", "task"],
    ["--output-format", "json", "--plain", "--no-color", "--debug", "--stdin"],
    ["words", "first", "-q", "--dry-run"],
    ["-q", "words", "after"],
    ["-p", ""],
    [],
    ["-v"],
]
# Left to argparse: abbreviations, combined flags, values that look like flags,
# a second run of words, bad choices, help.
SLOW = [
    ["--prov", "fake", "hi"],
    ["-qy", "hi"],
    ["-p", "-1"],
    ["-p"],
    ["one", "-q", "two"],
    ["--output-format", "xml", "hi"],
    ["--", "-p"],
    ["-h"],
]


@pytest.mark.parametrize("argv", FAST)
def test_fast_reader_agrees_with_argparse(argv: list[str]) -> None:
    fast = _fast_parse(argv)
    assert fast is not None
    assert vars(fast) == vars(build_parser().parse_args(argv))


@pytest.mark.parametrize("argv", SLOW)
def test_anything_unusual_is_left_to_argparse(argv: list[str]) -> None:
    assert _fast_parse(argv) is None


def test_yes_and_dry_run_contradict() -> None:
    with pytest.raises(UsageError, match="contradict"):
        parse_oneshot(["-y", "--dry-run", "-p", "x"])
    with pytest.raises(UsageError, match="contradict"):
        parse_oneshot(["--yes", "--dry-run", "--prov", "x", "-p", "x"])


def test_utf8_problem_names_the_first_bad_byte_of_what_the_os_gave() -> None:
    assert utf8_problem("plain ascii and é ✓") is None
    assert utf8_problem(os.fsdecode(b"ab\xffcd")) == "byte 0xff at offset 2"
    assert utf8_problem(os.fsdecode("é".encode() + b"\xc3")) == "byte 0xc3 at offset 2"
    assert utf8_problem("x\ud800") == "a lone surrogate at character 1"


def test_decode_input_names_offset_and_line() -> None:
    assert decode_input("é\n".encode(), "standard input") == "é\n"
    with pytest.raises(BadInput, match=r"standard input .* \(byte 0xfe at offset 7, line 3\)"):
        decode_input(b"a\nbc\ndd\xfe", "standard input")


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["-p", "fine", "-p", os.fsdecode(b"\xff")], "-p text #2"),
        (["-p", os.fsdecode(b"\xff")], "the -p text"),
        (["task", os.fsdecode(b"\xff")], "prompt word 2"),
        (["--provider", os.fsdecode(b"\xff"), "x"], "--provider"),
        (["--session=" + os.fsdecode(b"\xff"), "x"], "--session"),
    ],
)
def test_text_that_is_not_utf8_is_bad_input_naming_where(argv: list[str], named: str) -> None:
    with pytest.raises(BadInput, match=f"^{re.escape(named)} is not valid UTF-8"):
        parse_oneshot(argv)


def test_worktree_takes_an_optional_name() -> None:
    assert parse_oneshot(["-p", "task", "--worktree"]).worktree == ""
    assert parse_oneshot(["--worktree=fix", "-p", "task"]).worktree == "fix"
    assert parse_oneshot(["--worktree", "-p", "task"]).worktree == ""
    assert parse_oneshot(["-p", "task"]).worktree is None
    with pytest.raises(UsageError, match="--worktree makes a new session and --continue"):
        parse_oneshot(["-c", "--worktree", "-p", "task"])
