"""Reading a command line against a `command_rules.Syntax` table.

The conventions are GNU getopt's, which clap (uv) shares: short options may be
clustered (`-kj4`), a value may be attached (`-fX`, `--file=X`) or be the next
word, `--` ends the options, and options may come after operands. Where the
table says so, a unique prefix of a long name counts as that name (`--fil` is
`--file`), as GNU getopt_long reads it. Whatever the table does not allow is
a `ToolRefusal` that names the word and the reason: nothing is guessed.

Also here: holding the words that name files to the workspace rules.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.shell.command_rules import Option, Syntax
from coding_harness.daemon.tools.workspace import Workspace


@dataclass(kw_only=True, slots=True)
class Parsed:
    """The options found (with their values) and the other words, in order."""

    options: list[tuple[Option, str | None]] = field(default_factory=list)
    operands: list[str] = field(default_factory=list)

    def has(self, long: str) -> bool:
        return any(long in option.long for option, _ in self.options)


def parse(
    program: str, syntax: Syntax, args: Sequence[str], *, stop_at_operand: bool = False
) -> Parsed:
    """Read `args` (the words after `program`); stop at the first operand if asked."""
    reader = _Reader(program, syntax, args)
    while (word := reader.take()) is not None:
        if word == "--":
            reader.parsed.operands.extend(reader.rest())
        elif word.startswith("--"):
            reader.long_option(word)
        elif word.startswith("-") and word != "-":
            reader.short_options(word)
        elif stop_at_operand:
            reader.parsed.operands.extend([word, *reader.rest()])
        else:
            reader.parsed.operands.append(word)
    for name in syntax.requires:
        if not reader.parsed.has(name):
            raise ToolRefusal(
                f"refused: run_shell runs {program} only with --{name}, which keeps it "
                f"read-only (no locking, no network); add --{name}"
            )
    return reader.parsed


class _Reader:
    def __init__(self, program: str, syntax: Syntax, args: Sequence[str]) -> None:
        self.program = program
        self.syntax = syntax
        self.args = list(args)
        self.at = 0
        self.parsed = Parsed()

    def take(self) -> str | None:
        if self.at >= len(self.args):
            return None
        self.at += 1
        return self.args[self.at - 1]

    def rest(self) -> list[str]:
        words, self.at = self.args[self.at :], len(self.args)
        return words

    def long_option(self, word: str) -> None:
        name, eq, value = word[2:].partition("=")
        option = self._find_long(word, name)
        if option.value == "none" and eq:
            raise ToolRefusal(f"refused: {self.program} option '--{name}' takes no value")
        if eq:
            self._add(option, word, value)
        else:
            self._add(option, word, self._detached_value(option, word))

    def short_options(self, word: str) -> None:
        letters = word[1:]
        for index, letter in enumerate(letters):
            option = self._find_short(word, letter)
            if option.value == "none":
                self._add(option, word, None)
                continue
            attached = letters[index + 1 :]
            value = attached if attached else self._detached_value(option, f"-{letter}")
            self._add(option, word, value)
            return

    def _detached_value(self, option: Option, word: str) -> str | None:
        """The next word as the option's value, where the option takes it that way."""
        if option.value == "required":
            value = self.take()
            if value is None:
                raise ToolRefusal(f"refused: {self.program} option '{word}' needs a value")
            return value
        following = self.args[self.at] if self.at < len(self.args) else None
        if option.value == "number" and following is not None and _accepts(option, following):
            return self.take()
        return None

    def _add(self, option: Option, word: str, value: str | None) -> None:
        if value is not None and not _accepts(option, value):
            raise ToolRefusal(
                f"refused: {value!r} is not a value run_shell accepts for {self.program} "
                f"{option.spelling()} (it must match {option.accepts})"
            )
        self.parsed.options.append((option, value))

    def _find_long(self, word: str, name: str) -> Option:
        for option in self.syntax.options:
            if name in option.long:
                return self._allowed(option, f"'--{name}'")
        if self.syntax.abbreviations and name:
            matches = [o for o in self.syntax.options if any(n.startswith(name) for n in o.long)]
            for option in matches:
                self._allowed(option, f"'--{name}'")
            if matches:
                full = ", ".join(o.spelling() for o in matches)
                raise ToolRefusal(
                    f"refused: {self.program} option '--{name}' is abbreviated; write the "
                    f"option out in full ({full})"
                )
        raise self._unknown(f"'--{name}'")

    def _find_short(self, word: str, letter: str) -> Option:
        shown = f"'-{letter}'" + ("" if word == f"-{letter}" else f" (in '{word}')")
        for option in self.syntax.options:
            if option.short == letter:
                return self._allowed(option, shown)
        raise self._unknown(shown)

    def _allowed(self, option: Option, shown: str) -> Option:
        """`shown` is the option as quoted in messages: `'-f'`, `'-f' (in '-kf')`."""
        if option.refused:
            raise ToolRefusal(
                f"refused: {self.program} option {shown} is not allowed: {option.refused}"
            )
        return option

    def _unknown(self, shown: str) -> ToolRefusal:
        allowed = [_spellings(o) for o in self.syntax.options if not o.refused]
        listed = ", ".join(allowed) if allowed else "none"
        return ToolRefusal(
            f"refused: {shown} is not an option run_shell allows for {self.program}. "
            f"Allowed options: {listed}"
        )


def _accepts(option: Option, value: str) -> bool:
    return not option.accepts or re.fullmatch(option.accepts, value) is not None


def _spellings(option: Option) -> str:
    names = ([f"-{option.short}"] if option.short else []) + [f"--{n}" for n in option.long]
    return "/".join(names)


def check_option_paths(workspace: Workspace, parsed: Parsed) -> None:
    """Values of options that name files must stay inside and name nothing hidden."""
    for option, value in parsed.options:
        if option.path and value is not None:
            workspace.resolve_visible(value)


def check_words(workspace: Workspace, words: Sequence[str]) -> None:
    """Words that may be paths: options may carry one (`--opt=PATH`, `-pPATH`)."""
    for word in words:
        if word.startswith("--"):
            value = word.partition("=")[2]
        elif word.startswith("-"):
            value = word[2:] if "/" in word else ""
        else:
            value = word
        if value:
            workspace.resolve_visible(value)
