"""A small .gitignore matcher, enough to keep build output out of the fingerprint.

Supported: blank lines and `#` comments, `!` negation (the last matching
rule wins), a trailing `/` for folders only, a leading or inner `/` anchoring
the pattern to the workspace root (otherwise it matches a name at any depth),
`*`, `?`, `[...]` and `**`. Only the root `.gitignore` is read; nested ones
and `.git/info/exclude` are not. A folder that matches is not entered, as
with git.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_NEVER = re.compile(r"(?!)")


@dataclass(kw_only=True, slots=True, frozen=True)
class _Rule:
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool
    anchored: bool  # matched against the relative path, else against the name


class GitIgnore:
    """Answers "is this entry ignored?" for workspace-relative paths."""

    def __init__(self, rules: list[_Rule], source: str = "") -> None:
        self._rules = rules
        self.source = source  # the text the rules came from
        positive = [rule for rule in rules if not rule.negate]
        # One combined look per entry decides most cases: no positive rule matches.
        self._any_name = _combine(rule for rule in positive if not rule.anchored)
        self._any_path = _combine(rule for rule in positive if rule.anchored)

    @classmethod
    def parse(cls, text: str) -> GitIgnore:
        rules = [rule for line in text.splitlines() if (rule := _rule(line)) is not None]
        return cls(rules, text)

    @classmethod
    def for_root(cls, root: Path) -> GitIgnore:
        """The rules of `root/.gitignore`; none when it is missing or unreadable."""
        try:
            text = (root / ".gitignore").read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        return cls.parse(text)

    @property
    def has_rules(self) -> bool:
        return bool(self._rules)

    def ignored(self, rel: str, name: str, is_dir: bool) -> bool:
        if not self._any_name.match(name) and (
            self._any_path is _NEVER or not self._any_path.match(rel)
        ):
            return False
        verdict = False
        for rule in self._rules:
            if rule.dir_only and not is_dir:
                continue
            if rule.regex.match(rel if rule.anchored else name):
                verdict = not rule.negate
        return verdict


def _rule(line: str) -> _Rule | None:
    pattern = line.rstrip()
    if not pattern or pattern.startswith("#"):
        return None
    negate = pattern.startswith("!")
    pattern = pattern.removeprefix("!")
    if pattern.startswith(("\\#", "\\!")):
        pattern = pattern[1:]
    dir_only = pattern.endswith("/")
    pattern = pattern.rstrip("/")
    anchored = "/" in pattern
    pattern = pattern.removeprefix("/")
    if not pattern:
        return None
    regex = re.compile(translate(pattern))
    return _Rule(regex=regex, negate=negate, dir_only=dir_only, anchored=anchored)


def translate(pattern: str) -> str:
    """A gitignore glob as a regular expression matching a whole path or name."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        else:
            piece, i = _one(pattern, i)
            out.append(piece)
    return "".join(out) + r"\Z"


def _one(pattern: str, i: int) -> tuple[str, int]:
    """The regex for the glob element at `i`, and where the next one starts."""
    char = pattern[i]
    if char == "*":
        return "[^/]*", i + 1
    if char == "?":
        return "[^/]", i + 1
    if char == "\\" and i + 1 < len(pattern):
        return re.escape(pattern[i + 1]), i + 2
    if char == "[":
        end = pattern.find("]", i + 2)
        if end != -1:
            body = pattern[i + 1 : end]
            negated = body[:1] in ("!", "^")
            body = body[1:] if negated else body
            escaped = body.replace("\\", "\\\\").replace("[", "\\[")
            return f"[{'^' if negated else ''}{escaped}]", end + 1
    return re.escape(char), i + 1


def _combine(rules: Iterable[_Rule]) -> re.Pattern[str]:
    patterns = [rule.regex.pattern for rule in rules]
    if not patterns:
        return _NEVER
    return re.compile("|".join(f"(?:{pattern})" for pattern in patterns))
