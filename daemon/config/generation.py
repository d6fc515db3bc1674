"""Generation settings: the sampling parameters a profile may add to a request.

A profile's `generation` object comes from files the user may not have
written (a project's `.local_coding_harness.json` may set it without trust),
so it may only tune how the model samples: the keys in `SAMPLING_KEYS`. Any
other key (`messages`, `tools`, `model`, `stream`, `tool_choice`, ...) would
replace what the harness sends, so `sampling_only` drops it when the config
is read, and `request_payload` drops it again where a request is built, where
the harness's own members win over the profile's in any case.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Documented in docs/configuration.md ("Generation settings"); keep the two in step.
SAMPLING_KEYS: frozenset[str] = frozenset(
    {
        "temperature",
        "top_p",
        "top_k",
        "min_p",
        "typical_p",
        "top_a",
        "max_tokens",
        "max_completion_tokens",
        "stop",
        "seed",
        "presence_penalty",
        "frequency_penalty",
        "repetition_penalty",
        "logit_bias",
        "reasoning_effort",
        "reasoning",
        "verbosity",
    }
)


def sampling_only(generation: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """(the sampling parameters of `generation`, the names of the other keys, sorted)."""
    kept = {str(k): v for k, v in generation.items() if k in SAMPLING_KEYS}
    ignored = sorted(str(k) for k in generation if k not in SAMPLING_KEYS)
    return kept, ignored


def request_payload(own: Mapping[str, Any], generation: Mapping[str, Any]) -> dict[str, Any]:
    """`own` (model, messages, tools...) with the profile's sampling parameters added.

    Only `SAMPLING_KEYS` are taken from `generation`, and a member `own` sets
    is never replaced, whatever reached the profile.
    """
    extra = {k: v for k, v in generation.items() if k in SAMPLING_KEYS and k not in own}
    return {**own, **extra}
