"""Keeping secret values out of the daemon's log.

The log outlives every turn, so it is guarded by what the daemon has met so
far: `SecretBook` remembers the secrets of every turn (`tools/registry.py`
teaches it each turn's `Secrets`) and those of the daemon's own environment.
`RedactingFilter`, installed on the log's handlers, rewrites each record
before it is written: its message, the text of an exception it carries and
its stack, with every known value (plain or encoded) as `[redacted]`.

Install it where the log handler is made: `install_log_redaction()` after
`logging.getLogger().addHandler(handler)`. It is idempotent, so a later call
(each turn makes one) costs a look at the handlers.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping

from coding_harness.daemon.security.secrets import Secrets, collect_secrets, secrets_from

# Values met over the daemon's life are few: a key per profile and client.
BOOK_LIMIT = 500


class SecretBook:
    """Every secret value the daemon has met, for what outlives a turn (the log).

    It keeps the `limit` most recently learned values, against a client that
    sends a new key with every request."""

    def __init__(self, limit: int = BOOK_LIMIT, environ: Mapping[str, str] | None = None) -> None:
        self._limit = limit
        self._environ = environ  # None: the daemon's own, read at the first use
        self._lock = threading.Lock()
        self._origins: dict[str, str] = {}  # value -> variable, oldest first
        self._secrets = Secrets()
        self._environment_read = False

    def learn(self, secrets: Secrets) -> None:
        named = dict(secrets.origins)
        with self._lock:
            fresh = [value for value in secrets.values if value not in self._origins]
            if not fresh:
                return
            for value in fresh:
                self._origins[value] = named.get(value, "")
            for oldest in list(self._origins)[: max(0, len(self._origins) - self._limit)]:
                del self._origins[oldest]
            self._secrets = secrets_from(self._origins)

    def current(self) -> Secrets:
        if not self._environment_read:
            self._environment_read = True
            self.learn(collect_secrets((), os.environ if self._environ is None else self._environ))
        return self._secrets


KNOWN_SECRETS = SecretBook()


class RedactingFilter(logging.Filter):
    """Rewrites a record so no known secret value reaches the log; drops nothing."""

    def __init__(self, book: SecretBook = KNOWN_SECRETS) -> None:
        super().__init__()
        self.book = book

    def filter(self, record: logging.LogRecord) -> bool:
        secrets = self.book.current()
        if not secrets.values:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: the handler reports it as usual
            return True
        cleaned = secrets.redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = secrets.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = secrets.redact(record.stack_info)
        return True


def install_log_redaction(
    logger: logging.Logger | None = None, book: SecretBook = KNOWN_SECRETS
) -> None:
    """Put a `RedactingFilter` on every handler of `logger` (default: the root logger)
    that has none yet. A filter on the handler sees records from every logger."""
    for handler in (logger or logging.getLogger()).handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter(book))
