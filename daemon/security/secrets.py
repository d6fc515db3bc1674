"""The secrets a session knows about: which variables hold them, and their values.

A secret is a provider's API key (whatever its `api_key_env` variable is
called), a web search key, any variable whose name says it is one (KEY,
TOKEN, SECRET, PASSWORD, CREDENTIAL...) and holds something that looks like
one, and the password of a URL with credentials in it (`DATABASE_URL`).
Tool children never get these variables (`tools/process.py` builds their
environment from an allow-list and removes these names besides).

`Secrets` also knows how each value looks when encoded (percent-escaped,
hex, base64 at any byte offset), so that `redact` replaces it in text bound
for the model, the store or the log, and `leak_in` spots one in a tool call's
arguments (`tools/registry.py` refuses such a call). Splitting, reversing or
re-encoding a value twice over is not caught: redaction keeps honest output
clean and stops the obvious exfiltration, it is no proof against a determined
program. `secret_log.py` applies the same redaction to the daemon's log.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, quote_plus, unquote, unquote_plus, urlsplit

from coding_harness.protocol.config_files import SEARCH_KEY_VARIABLES

REDACTED = "[redacted]"
_SECRET_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSW(?:OR)?D|PASSPHRASE|CREDENTIAL|PRIVATE|AUTH(?!OR)|(?:^|_)PASS(?:_|$)"
)
# Shorter values (and shorter encoded forms) are too likely to be ordinary
# words or numbers to redact safely.
MIN_SECRET_LENGTH = 8
# A value of a secret-looking variable made of letters only is a word ("production")
# unless it is this long.
_MIN_WORD_SECRET = 16
_DECODE_ROUNDS = 3


def looks_secret(name: str) -> bool:
    """Whether a variable's name says it holds a secret (GIT_AUTHOR_NAME does not)."""
    return _SECRET_NAME.search(name.upper()) is not None


@dataclass(frozen=True, kw_only=True, slots=True)
class Secrets:
    names: frozenset[str] = frozenset()
    values: tuple[str, ...] = ()  # longest first, so a value inside another is not split
    # (value, variable) pairs, so a refusal can say whose value it met.
    origins: tuple[tuple[str, str], ...] = ()
    # Every form of every value (itself and its encodings), longest first, with the value.
    _forms: tuple[tuple[str, str], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        pairs = {(form, value) for value in self.values for form in encoded_forms(value)}
        ordered = sorted(pairs, key=lambda pair: (-len(pair[0]), pair[0]))
        object.__setattr__(self, "_forms", tuple(ordered))

    def redact(self, text: str) -> str:
        """`text` with every known secret value, plain or encoded, replaced by `[redacted]`."""
        for form, _ in self._forms:
            if form in text:
                text = text.replace(form, REDACTED)
        return text

    def found_in(self, text: str) -> bool:
        return self.leak_in(text) is not None

    def leak_in(self, text: str) -> str | None:
        """What secret `text` carries ("the value of NAME"), in any known form and after
        undoing percent-escapes; None when it carries none."""
        for variant in _decodings(text):
            for form, value in self._forms:
                if form in variant:
                    return self._describe(value)
        return None

    def redact_data(self, data: Any) -> Any:
        """`data` (JSON-like: dicts, lists, strings) with every string redacted."""
        if not self.values:
            return data
        if isinstance(data, str):
            return self.redact(data)
        if isinstance(data, dict):
            return {key: self.redact_data(item) for key, item in data.items()}
        if isinstance(data, list | tuple):
            return [self.redact_data(item) for item in data]
        return data

    def _describe(self, value: str) -> str:
        names = sorted(name for known, name in self.origins if known == value)
        return f"the value of {names[0]}" if names else "a secret value"


def collect_secrets(key_variables: Iterable[str], *environments: Mapping[str, str]) -> Secrets:
    """The secrets named by `key_variables` (profiles' and search keys) or by their
    look, with their values as found in any of `environments`."""
    declared = set(key_variables) | set(SEARCH_KEY_VARIABLES)
    names = set(declared)
    origins: dict[str, str] = {}
    for env in environments:
        for name, raw in env.items():
            value = raw.strip()
            if name in declared:
                origins.setdefault(value, name)
            elif looks_secret(name):
                names.add(name)
                if _plausible(value):
                    origins.setdefault(value, name)
            for password in _url_passwords(value):
                names.add(name)
                origins.setdefault(password, name)
                origins.setdefault(value, name)
    return secrets_from(origins, names)


def secrets_from(origins: Mapping[str, str], names: Iterable[str] = ()) -> Secrets:
    """`Secrets` holding each value of `origins` (value -> the variable it came from,
    or '' when unknown) long enough to count, and the variable `names`."""
    kept = {value: name for value, name in origins.items() if len(value) >= MIN_SECRET_LENGTH}
    return Secrets(
        names=frozenset(names),
        values=tuple(sorted(kept, key=lambda value: (-len(value), value))),
        origins=tuple(sorted((value, name) for value, name in kept.items() if name)),
    )


def _plausible(value: str) -> bool:
    """Whether the value of a secret-looking variable looks like a secret, not a
    path (SSH_AUTH_SOCK) or a word (AUTH_MODE=production)."""
    if len(value) < MIN_SECRET_LENGTH or value.startswith(("/", "~/", "./")):
        return False
    return not value.isalpha() or len(value) >= _MIN_WORD_SECRET


def _url_passwords(value: str) -> list[str]:
    """The password of a URL with credentials (`postgres://app:PASSWORD@db/app`)."""
    if "://" not in value or "@" not in value:
        return []
    try:
        password = urlsplit(value).password
    except ValueError:
        return []
    return [unquote(password)] if password else []


def encoded_forms(value: str) -> set[str]:
    """`value` and the ways a program prints it encoded, each long enough to match safely."""
    data = value.encode("utf-8", "surrogatepass")
    forms = {value, quote(value, safe=""), quote(value), quote_plus(value)}
    forms |= {data.hex(), data.hex().upper()}
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        forms.update(_base64_cores(data, encode))
    return {form for form in forms if len(form) >= MIN_SECRET_LENGTH}


def _base64_cores(data: bytes, encode: Any) -> Iterator[str]:
    """The part of `data`'s base64 text that stays the same wherever it starts in a
    longer stream (for each of the three byte offsets)."""
    for offset in range(3):
        text: str = encode(b"\0" * offset + data).decode("ascii")
        start = 4 if offset else 0
        end = len(text) - (4 if (offset + len(data)) % 3 else 0)
        if end > start:
            yield text[start:end]


def _decodings(text: str) -> Iterator[str]:
    """`text`, then `text` with percent-escapes (and `+` for spaces) undone, repeatedly."""
    yield text
    seen = {text}
    current = text
    for _ in range(_DECODE_ROUNDS):
        for decoded in (unquote(current), unquote_plus(current)):
            if decoded not in seen:
                seen.add(decoded)
                yield decoded
        current = unquote(current)
