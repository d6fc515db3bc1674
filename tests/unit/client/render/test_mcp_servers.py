"""The MCP server table, the restart line and the `mcp.state` event's line."""

from __future__ import annotations

import io

from coding_harness.client.render.mcp_servers import (
    server_line,
    state_line,
    table_lines,
    tools_cell,
)
from coding_harness.client.render.style import Style
from tests.unit.client.render.test_plain_view import Screen

NOW = 1_000_000.0
READY = {
    "name": "time",
    "state": "ready",
    "pid": 4242,
    "tools": ["get_current_time", "convert_time"],
    "error": None,
    "transport": "stdio",
    "command": "/venv/bin/mcp-server-time",
    "started_at": NOW - 90,
    "calls": 3,
    "scope": "user",
}
FAILED = {
    "name": "web",
    "state": "failed",
    "pid": None,
    "tools": [],
    "error": "connection refused by 127.0.0.1:9",
    "started_at": None,
}


def test_tools_show_the_count_and_the_names_that_fit() -> None:
    assert tools_cell(["get_current_time", "convert_time"]) == "2: get_current_time, convert_time"
    assert tools_cell([]) == "0"
    many = [f"tool_number_{n}" for n in range(12)]
    cell = tools_cell(many)
    assert cell.startswith("12: tool_number_0, tool_number_1") and cell.endswith(", ...")
    assert len(cell) <= 40
    assert tools_cell(["x" * 80]) == "1: ..."
    assert tools_cell(None) == "0"


def test_the_table_aligns_its_columns_and_says_what_failed() -> None:
    lines = table_lines([READY, FAILED], Style(io.StringIO()), now=NOW)
    assert lines[0].split() == ["NAME", "STATE", "PID", "TOOLS", "STARTED", "ERROR"]
    assert lines[1].split()[:4] == ["time", "ready", "4242", "2:"]
    assert "90s ago" in lines[1] and lines[1].endswith("  -")
    assert lines[2].split()[:4] == ["web", "failed", "-", "0"]
    assert lines[2].endswith("connection refused by 127.0.0.1:9")
    starts = {
        line.index(word) for line, word in zip(lines, ("STATE", "ready", "failed"), strict=True)
    }
    assert len(starts) == 1  # one column


def test_colors_only_when_the_style_has_them() -> None:
    plain = table_lines([READY, FAILED], Style(io.StringIO()), now=NOW)
    assert not any("\x1b[" in line for line in plain)
    colored = table_lines([READY, FAILED], Style(io.StringIO(), color=True), now=NOW)
    assert "\x1b[32mready" in colored[1] and "\x1b[31mfailed" in colored[2]


def test_a_long_error_is_cut_to_the_width_and_whole_without_one() -> None:
    broken = {**FAILED, "error": "refused " * 40}
    whole = table_lines([broken], Style(io.StringIO()), now=NOW)[1]
    assert whole.endswith("refused")
    cut = table_lines([broken], Style(io.StringIO()), now=NOW, width=80)[1]
    assert len(cut) == 80 and cut.endswith("…")


def test_what_a_server_says_cannot_drive_the_terminal() -> None:
    hostile = {**READY, "name": "ti\x1b[2Jme", "tools": ["a\rb"], "error": "x\n\x1b]0;pwn\x07"}
    text = "\n".join(table_lines([hostile], Style(io.StringIO()), now=NOW))
    assert "\x1b" not in text and "\r" not in text and "\x07" not in text
    assert len(text.splitlines()) == 2
    line, _ = state_line({"name": "t\x1b[31m", "state": "failed", "error": "a\nb"})
    assert "\x1b" not in line and "\n" not in line


def test_the_restart_line_and_the_event_line() -> None:
    assert server_line(READY) == ("time: ready (pid 4242, 2 tools)", "green")
    assert server_line(FAILED) == ("web: failed: connection refused by 127.0.0.1:9", "red")
    assert state_line({"name": "time", "state": "ready", "error": None}) == (
        "mcp: time ready",
        "dim",
    )
    assert state_line({"name": "time", "state": "failed", "error": None}) == (
        "mcp: time failed: no reason given",
        "red",
    )


def test_the_printer_shows_a_failure_always_and_a_ready_server_unless_quiet() -> None:
    screen = Screen()
    screen.emit("mcp.state", name="time", state="starting", error=None)
    assert screen.err.getvalue() == ""  # a plain view has no spinner to label
    screen.emit("mcp.state", name="time", state="ready", error=None)
    screen.emit("mcp.state", name="web", state="failed", error="exited with code 1")
    assert screen.err.getvalue() == "mcp: time ready\nmcp: web failed: exited with code 1\n"
    assert screen.out.getvalue() == ""
    quiet = Screen(quiet=True)
    quiet.emit("mcp.state", name="time", state="ready", error=None)
    quiet.emit("mcp.state", name="web", state="failed", error="exited with code 1")
    assert quiet.err.getvalue() == "mcp: web failed: exited with code 1\n"


def test_the_same_news_of_a_server_is_shown_once() -> None:
    screen = Screen()
    for _ in range(3):  # the daemon's retries with backoff
        screen.emit("mcp.state", name="web", state="starting", error=None)
        screen.emit("mcp.state", name="web", state="failed", error="exited with code 1")
    screen.emit("mcp.state", name="web", state="failed", error="exited with code 2")
    for _ in range(2):  # a restart of a ready server is news each time
        screen.emit("mcp.state", name="web", state="starting", error=None)
        screen.emit("mcp.state", name="web", state="ready", error=None)
    screen.emit("mcp.state", name="web", state="failed", error="exited with code 2")
    assert screen.err.getvalue().splitlines() == [
        "mcp: web failed: exited with code 1",
        "mcp: web failed: exited with code 2",
        "mcp: web ready",
        "mcp: web ready",
        "mcp: web failed: exited with code 2",
    ]
