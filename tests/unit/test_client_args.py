"""`harness --help` is complete, and the fast command-line reader agrees with argparse."""

from __future__ import annotations

import pytest

from coding_harness.client.args import (
    SUBCOMMANDS,
    UsageError,
    _fast_parse,
    build_parser,
    parse_oneshot,
)


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
        ("2", "make check failed"),
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
