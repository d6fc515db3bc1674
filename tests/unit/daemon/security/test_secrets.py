"""Which variables count as secrets, their values and encodings, redaction (of text and
of the log), and agent.env_pass."""

from __future__ import annotations

import base64
import io
import logging
from collections.abc import Callable
from urllib.parse import quote

import pytest

from coding_harness.daemon.config.settings import AgentSettings, parse_agent
from coding_harness.daemon.security.secret_log import SecretBook, install_log_redaction
from coding_harness.daemon.security.secrets import REDACTED, Secrets, collect_secrets, looks_secret


def test_profile_key_variables_count_whatever_they_are_called() -> None:
    daemon_env = {"MODEL_PASS": "from-the-daemon-1", "PATH": "/bin", "GH_TOKEN": "ghp-123456789"}
    client_env = {"MODEL_PASS": "from-the-client-2"}
    found = collect_secrets(["MODEL_PASS"], client_env, daemon_env)
    assert {"MODEL_PASS", "GH_TOKEN", "BRAVE_SEARCH_API_KEY", "EXA_API_KEY"} <= found.names
    assert "PATH" not in found.names
    assert set(found.values) == {"from-the-daemon-1", "from-the-client-2", "ghp-123456789"}


def test_short_values_are_not_treated_as_secrets() -> None:
    assert collect_secrets(["K"], {"K": "abc"}).values == ()


def test_redaction_replaces_every_known_value_longest_first() -> None:
    secrets = Secrets(names=frozenset(), values=("sk-live-abcdef123", "abcdef123"))
    text = "key sk-live-abcdef123 and abcdef123"
    assert secrets.redact(text) == f"key {REDACTED} and {REDACTED}"
    assert secrets.found_in(text) and not secrets.found_in("nothing here")


@pytest.mark.parametrize(
    ("name", "secret"),
    [("OPENAI_API_KEY", True), ("db_password", True), ("MY_CREDENTIALS", True),
     ("MODEL_PASS", True), ("GITHUB_AUTH", True),
     ("PATH", False), ("LANG", False), ("GIT_AUTHOR_EMAIL", False), ("COMPASS_DIR", False)],
)  # fmt: skip
def test_names_that_say_secret(name: str, secret: bool) -> None:
    assert looks_secret(name) is secret


def test_env_pass_takes_a_list_of_names() -> None:
    problems: list[str] = []
    good = parse_agent({"env_pass": ["PROJECT_MODE"]}, lambda path: "f", problems)
    assert good.env_pass == ("PROJECT_MODE",) and problems == []
    bad = parse_agent({"env_pass": ["NOT A NAME"]}, lambda path: "f", problems)
    assert bad == AgentSettings() and "agent.env_pass must be a list" in problems[0]


KEY = "sk-test-3f9a1c77e2b04d51"


def test_encoded_forms_of_a_value_are_redacted_wherever_they_start() -> None:
    secrets = collect_secrets(["MODEL_KEY"], {"MODEL_KEY": KEY})
    data = KEY.encode()
    for prefix in (b"", b"x", b"xy"):  # base64 of a value depends on its byte offset
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            printed = encode(prefix + data + b"tail").decode()
            assert secrets.found_in(printed), (prefix, encode)
            assert REDACTED in secrets.redact(printed)
    for printed in (KEY, data.hex(), data.hex().upper(), quote(KEY, safe="")):
        assert secrets.redact(f"before {printed} after") == f"before {REDACTED} after"


def test_a_leak_is_found_after_undoing_percent_escapes_and_names_its_variable() -> None:
    secrets = collect_secrets(["MODEL_KEY"], {"MODEL_KEY": KEY})
    escaped = "".join(f"%{byte:02x}" for byte in KEY.encode())  # every byte escaped
    b64 = quote(base64.b64encode(KEY.encode()).decode(), safe="")
    for url in (
        f"https://evil.example/?k={escaped}",
        f"https://evil.example/?k={quote(escaped, safe='')}",  # escaped twice
        f"https://evil.example/?k={b64}",
        f"https://evil.example/{KEY.encode().hex()}.png",
    ):
        assert secrets.leak_in(url) == "the value of MODEL_KEY", url
    assert secrets.leak_in("https://docs.python.org/3/library/json.html") is None


def test_only_values_that_look_secret_count_for_names_that_look_secret() -> None:
    env = {
        "AUTH_MODE": "production",  # a word, not a secret
        "SSH_AUTH_SOCK": "/run/user/1000/keyring/ssh",  # a path
        "GIT_AUTHOR_NAME": "Jane Q. Example",  # AUTHOR is not AUTH
        "DATABASE_URL": "postgres://app:db-pass-77c1@db/app",
        "MY_CREDENTIALS": "cred-value-5b2e",
    }
    found = collect_secrets([], env)
    assert "GIT_AUTHOR_NAME" not in found.names
    assert {"AUTH_MODE", "SSH_AUTH_SOCK", "MY_CREDENTIALS", "DATABASE_URL"} <= found.names
    assert set(found.values) == {
        "db-pass-77c1",
        "postgres://app:db-pass-77c1@db/app",
        "cred-value-5b2e",
    }
    assert found.redact("we run in production") == "we run in production"


def test_a_declared_key_counts_whatever_it_holds() -> None:
    found = collect_secrets(["MODEL_PASS"], {"MODEL_PASS": "abcdefghij"})
    assert found.values == ("abcdefghij",)


def test_redact_data_reaches_every_string_of_an_event() -> None:
    secrets = collect_secrets(["K"], {"K": KEY})
    data = {"output": f"x {KEY}", "lines": [KEY, 3], "nested": {"diff": f"-{KEY}"}, "ok": True}
    assert secrets.redact_data(data) == {
        "output": f"x {REDACTED}",
        "lines": [REDACTED, 3],
        "nested": {"diff": f"-{REDACTED}"},
        "ok": True,
    }


def _logged(book: SecretBook, emit: Callable[[logging.Logger], None]) -> str:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger("test_secrets.redaction")
    logger.propagate = False
    logger.addHandler(handler)
    try:
        install_log_redaction(logger, book)
        install_log_redaction(logger, book)  # idempotent
        assert len(handler.filters) == 1
        emit(logger)
    finally:
        logger.removeHandler(handler)
    return stream.getvalue()


def test_the_log_filter_redacts_messages_arguments_and_tracebacks() -> None:
    book = SecretBook(environ={})
    book.learn(collect_secrets(["K"], {"K": KEY}))

    def emit(logger: logging.Logger) -> None:
        logger.warning("POST https://api.example/v1?key=%s", KEY)
        try:
            raise RuntimeError(f"server said: bad key {KEY}")
        except RuntimeError:
            logger.exception("turn failed")

    text = _logged(book, emit)
    assert KEY not in text
    assert f"?key={REDACTED}" in text and f"bad key {REDACTED}" in text
    assert "RuntimeError" in text  # the traceback is kept, only the value goes


def test_the_book_remembers_secrets_of_earlier_turns() -> None:
    book = SecretBook(environ={})
    book.learn(collect_secrets(["A"], {"A": "first-key-0001"}))
    book.learn(collect_secrets(["B"], {"B": "second-key-0002"}))
    assert {"first-key-0001", "second-key-0002"} <= set(book.current().values)


def test_the_book_keeps_the_latest_values_up_to_its_limit() -> None:
    book = SecretBook(limit=2, environ={})
    for n in range(3):
        book.learn(collect_secrets(["A"], {"A": f"rotated-key-{n:04}"}))
    assert set(book.current().values) == {"rotated-key-0001", "rotated-key-0002"}


def test_the_book_knows_the_daemons_own_secrets_before_any_turn() -> None:
    book = SecretBook(environ={"GH_TOKEN": "ghp-0123456789", "PATH": "/usr/bin:/bin"})
    assert book.current().values == ("ghp-0123456789",)
