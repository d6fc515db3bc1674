"""Tables for /context, /tokens and `harness sessions`, printed to strings."""

from __future__ import annotations

import io

from coding_harness.client.render.tables import (
    print_table,
    render_context_table,
    render_tokens_table,
    sessions_table,
)

CONTEXT = {
    "messages": [
        {"index": 0, "role": "system", "chars": 4000, "tokens": 1000, "preview": "You are..."},
        {
            "index": 1,
            "role": "user",
            "chars": 30,
            "tokens": 8,
            "preview": "[red]fix[/red] it\x1b[2J\nnow\u202e",
        },
        {"index": 2, "role": "assistant", "chars": 12000, "tokens": 3000, "preview": "x" * 500},
    ],
    "total_tokens": 4008,
    "context_limit": 32000,
}
STATS = {
    "session": {
        "usage": {"prompt_tokens": 1200, "cached_tokens": 200, "completion_tokens": 80},
        "cost_usd": 0.0042,
    },
    "daily": [
        {
            "day": f"2026-11-{d:02}",
            "provider": "fake",
            "prompt_tokens": d * 1000,
            "cached_tokens": 0,
            "completion_tokens": d,
            "cost_usd": None,
        }
        for d in range(1, 11)
    ],
}


def printed(render: object, data: object, *, color: bool) -> str:
    out = io.StringIO()
    render(data, out, color=color)  # type: ignore[operator]
    return out.getvalue()


def test_context_table_lists_messages_and_the_total() -> None:
    text = printed(render_context_table, CONTEXT, color=False)
    assert "context: 4,008 tokens of 32,000 (13%)" in text
    assert "system" in text and "1,000" in text and "12,000" in text
    assert "[red]fix[/red] it\\x1b[2J ⏎ now<U+202E>" in text  # markup and escapes shown
    assert "\x1b" not in text
    assert max(len(line) for line in text.splitlines()) <= 100


def test_context_table_in_color_at_a_terminal() -> None:
    text = printed(render_context_table, CONTEXT, color=True)
    assert "\x1b[" in text and "\x1b[31m" not in text  # styled, and "[red]" not obeyed


def test_tokens_table_shows_the_session_then_the_last_days() -> None:
    text = printed(render_tokens_table, STATS, color=False)
    assert "this session" in text and "1,200" in text and "$0.0042" in text
    assert "2026-11-10" in text and "2026-11-04" in text and "2026-11-03" not in text
    assert "unknown" in text


def test_sessions_table_keeps_full_ids() -> None:
    session = {
        "session": "s-0123456789abcdef0123",
        "cwd": "/home/me/a/rather/long/path/to/a/project/folder/that/goes/on",
        "state": "running",
        "clients": 2,
        "last_activity": 1000.0,
        "usage": {"prompt_tokens": 1000, "completion_tokens": 234},
        "cost_usd": None,
        "options": {"mode": "accept-edits"},
    }
    out = io.StringIO()
    print_table(sessions_table([session], now=1090.0), out, color=False)
    text = out.getvalue()
    assert "s-0123456789abcdef0123" in text and "90s" in text and "1,234" in text
    assert "running" in text and "unknown" in text and "accept-edits" in text


def test_tokens_table_shows_totals_the_cached_share_rates_and_tiny_costs() -> None:
    stats = {
        "session": {
            "usage": {"prompt_tokens": 2000, "cached_tokens": 500, "completion_tokens": 100},
            "cost_usd": 0.0000123,
            "provider": "fast",
            "pricing": {"input": 0.15, "output": 0.6},
        },
        "daily": [],
    }
    text = printed(render_tokens_table, stats, color=False)
    assert "2,100" in text  # prompt + completion
    assert "500 (25%)" in text
    assert "$0.0000123" in text
    assert "fast rates per 1M tokens: input $0.15, output $0.6" in text


def test_context_table_has_a_repo_map_row_only_when_the_map_counts() -> None:
    with_map = printed(render_context_table, {**CONTEXT, "repo_map_tokens": 1012}, color=False)
    row = next(line for line in with_map.splitlines() if "repo map" in line)
    assert "1,012" in row and "/map shows it" in row
    for absent in (0, None, "x", float("inf")):
        text = printed(render_context_table, {**CONTEXT, "repo_map_tokens": absent}, color=False)
        assert "repo map" not in text
    assert "repo map" not in printed(render_context_table, CONTEXT, color=False)  # older daemon
