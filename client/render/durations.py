"""How long ago something happened, in one short word: `90s`, `12m`, `3h`."""

from __future__ import annotations


def age(seconds: float) -> str:
    """How long ago, in the largest unit that fits."""
    if seconds < 120:
        return f"{int(seconds)}s"
    if seconds < 7200:
        return f"{int(seconds // 60)}m"
    return f"{int(seconds // 3600)}h"
