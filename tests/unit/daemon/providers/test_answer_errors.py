"""Errors inside a successful answer: which class each becomes and whether it may be
asked again (a 200 whose stream reports an error, or an error body under a 200)."""

from __future__ import annotations

from typing import Any

import pytest

from coding_harness.daemon.agent.model_errors import (
    ModelBadResponse,
    ModelContextExceeded,
    ModelError,
    ModelRateLimited,
)
from coding_harness.daemon.providers.answer_errors import error_in_answer

ENDPOINT = "https://api.example.com/v1/chat/completions"


@pytest.mark.parametrize(
    ("error", "kind", "retryable"),
    [
        ({"message": "upstream overloaded", "code": 502}, ModelBadResponse, True),
        ({"message": "The server had an error", "type": "server_error"}, ModelBadResponse, True),
        ({"message": "Overloaded", "type": "overloaded_error"}, ModelBadResponse, True),
        ("something broke", ModelBadResponse, True),
        ({"message": "timed out", "code": 408}, ModelBadResponse, True),
        ({"message": "Rate limit reached", "code": "rate_limit_exceeded"}, ModelRateLimited, True),
        ({"message": "Provider returned error", "code": 429}, ModelRateLimited, True),
        ({"message": "Token limit reached", "code": 400}, ModelBadResponse, False),
        ({"message": "bad", "status_code": "404"}, ModelBadResponse, False),
        (
            {"message": "Tool call validation failed", "code": "tool_use_failed"},
            ModelBadResponse,
            False,
        ),
        ({"message": "x", "type": "invalid_request_error"}, ModelBadResponse, False),
        ({"message": "Failed to parse tool call arguments as JSON"}, ModelBadResponse, False),
        (
            {"message": "You exceeded your current quota", "code": "insufficient_quota"},
            ModelBadResponse,
            False,
        ),
        ({"message": "usage limit reached for this plan"}, ModelBadResponse, False),
        (
            {"message": "maximum context length is 8192 tokens", "code": 400},
            ModelContextExceeded,
            False,
        ),
        ({"message": "too long", "type": "exceed_context_size_error"}, ModelContextExceeded, False),
    ],
)
def test_each_error_gets_its_class_and_retry_rule(
    error: Any, kind: type[ModelError], retryable: bool
) -> None:
    found = error_in_answer(error, ENDPOINT)
    assert type(found) is kind
    assert found.retryable is retryable
    assert found.endpoint == ENDPOINT
    assert found.message.startswith(f"the model server at {ENDPOINT} reported an error")
    assert found.status is None  # the HTTP status was a success


def test_the_context_error_names_compaction_and_the_quota_error_says_why_no_retry() -> None:
    context = error_in_answer({"message": "exceeds the context window"}, ENDPOINT)
    assert "compact" in context.message
    quota = error_in_answer({"message": "billing hard limit reached"}, ENDPOINT)
    assert "quota or usage limit is used up" in quota.message


def test_a_string_code_is_shown_and_a_long_message_is_cut() -> None:
    found = error_in_answer({"message": "m" * 1000, "code": "busy"}, ENDPOINT)
    assert "reported an error (busy): " in found.message
    assert len(found.message) < 500


def test_an_error_without_a_message_shows_the_object() -> None:
    found = error_in_answer({"code": "weird"}, "")
    assert "the server reported an error (weird)" in found.message
    assert '"code": "weird"' in found.message
