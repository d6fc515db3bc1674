"""The one JSON result of a run (`--output-format json` and `stream-json`'s last
line): exactly the contract's keys (docs/terminal.md), whatever the daemon sent.
Standard library only: the one-shot prints it."""

from __future__ import annotations

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

USAGE_KEYS = ("prompt_tokens", "cached_tokens", "completion_tokens")


def result_object(result: dict[str, Any]) -> dict[str, Any]:
    """The one JSON result of a run, with exactly the contract's keys."""
    usage = result.get("usage") or {}
    cost = result.get("cost_usd")
    return {
        "reply": str(result.get("reply") or ""),
        "exit_code": int(result.get("exit_code", 1)),
        "session": result.get("session"),
        "usage": {key: int(usage.get(key) or 0) for key in USAGE_KEYS},
        "cost_usd": float(cost) if isinstance(cost, int | float) else None,
        "files_changed": [str(path) for path in result.get("files_changed") or []],
        "check": _check(result.get("check")),
    }


def _check(check: Any) -> dict[str, Any] | None:
    """`{command, passed}` of the turn's last check; None: no check ran (not verified)."""
    if not isinstance(check, dict):
        return None
    return {"command": str(check.get("command")), "passed": check.get("passed") is True}
