"""Request parameters: every string a request carries must be valid Unicode (-32602)."""

from __future__ import annotations

from typing import Any

import pytest

from coding_harness.daemon.methods.params import env_map, optional_text, options_map, text
from coding_harness.protocol import errors

LONE = "\ud800"


@pytest.mark.parametrize(
    ("check", "value", "where"),
    [
        (lambda v: text("text", v), f"fix {LONE} it", "in text"),
        (lambda v: text("reason", v, required=False), LONE, "in reason"),
        (lambda v: optional_text("model", v), f"m{LONE}", "in model"),
        (lambda v: env_map({"KEY": v}), LONE, "in env"),
        (lambda v: env_map({v: "x"}), LONE, "in env"),
        (lambda v: options_map({"skill": v}), LONE, "in options"),
        (lambda v: options_map({"a": [{"b": [v]}]}), LONE, "in options.a[0].b[0]"),
    ],
)
def test_a_lone_surrogate_is_invalid_params_naming_where(
    check: Any, value: str, where: str
) -> None:
    with pytest.raises(errors.InvalidParams, match="invalid text") as raised:
        check(value)
    assert raised.value.code == -32602
    assert where in str(raised.value)


def test_valid_unicode_passes_unchanged() -> None:
    assert text("text", "héllo 👋 \u202e") == "héllo 👋 \u202e"
    assert options_map({"skill": "naïve", "n": 1}) == {"skill": "naïve", "n": 1}


def test_any_nesting_depth_is_checked_without_recursion() -> None:
    deep: Any = LONE
    for _ in range(5_000):
        deep = [deep]
    with pytest.raises(errors.InvalidParams, match="invalid text"):
        options_map({"x": deep})
