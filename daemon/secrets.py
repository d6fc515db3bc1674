"""The secrets a session knows about: which variables hold them, and their values.

A secret is a provider's API key (whatever its `api_key_env` variable is
called), a web search key, or any variable whose name says it is one (KEY,
TOKEN, SECRET, PASSWORD, CREDENTIAL...). Tool children never get these
variables (`tools/process.py` builds their environment from an allow-list
and removes these names besides), and a value that still shows up in text
bound for the model can be replaced by `[redacted]`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .tools.search import BRAVE_KEY, EXA_KEY, EXA_KEY_LEGACY

REDACTED = "[redacted]"
SEARCH_KEY_VARIABLES = (BRAVE_KEY, EXA_KEY, EXA_KEY_LEGACY)
SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH")
# Shorter values are too likely to be ordinary words or numbers to redact safely.
MIN_SECRET_LENGTH = 8


def looks_secret(name: str) -> bool:
    """Whether a variable's name says it holds a secret."""
    upper = name.upper()
    return any(word in upper for word in SECRET_WORDS)


@dataclass(frozen=True, kw_only=True, slots=True)
class Secrets:
    names: frozenset[str] = frozenset()
    values: tuple[str, ...] = ()  # longest first, so a value inside another is not split

    def redact(self, text: str) -> str:
        """`text` with every known secret value replaced by `[redacted]`."""
        for value in self.values:
            if value in text:
                text = text.replace(value, REDACTED)
        return text

    def found_in(self, text: str) -> bool:
        return any(value in text for value in self.values)


def collect_secrets(key_variables: Iterable[str], *environments: Mapping[str, str]) -> Secrets:
    """The secrets named by `key_variables` (profiles' and search keys) or by their
    look, with their values as found in any of `environments`."""
    names = set(key_variables) | set(SEARCH_KEY_VARIABLES)
    for env in environments:
        names.update(name for name in env if looks_secret(name))
    values = {
        env[name].strip()
        for env in environments
        for name in names
        if len(env.get(name, "").strip()) >= MIN_SECRET_LENGTH
    }
    return Secrets(names=frozenset(names), values=tuple(sorted(values, key=len, reverse=True)))
