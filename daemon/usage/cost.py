"""Money: the cost of token usage under a profile's pricing.

Pricing is USD per million tokens: `input`, `cached_input` (defaults to
`input`) and `output`. A profile without pricing has an unknown cost (None),
except local (`mlx`) profiles, which cost nothing.
"""

from __future__ import annotations

from coding_harness.daemon.agent.seams import Usage
from coding_harness.daemon.config.profiles import ProviderProfile

PER = 1_000_000


def cost_usd(usage: Usage, profile: ProviderProfile) -> float | None:
    if profile.pricing is None:
        return 0.0 if profile.type == "mlx" else None
    rate_in = float(profile.pricing.get("input", 0.0))
    rate_cached = float(profile.pricing.get("cached_input", rate_in))
    rate_out = float(profile.pricing.get("output", 0.0))
    cached = min(usage.cached_tokens, usage.prompt_tokens)
    uncached = usage.prompt_tokens - cached
    return (uncached * rate_in + cached * rate_cached + usage.completion_tokens * rate_out) / PER


def add_cost(total: float | None, extra: float | None) -> float | None:
    if total is None or extra is None:
        return None
    return total + extra
