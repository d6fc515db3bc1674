"""How the code index reads: `/map`'s header, the `index.state` event's lines (and
when the printer shows them), and `harness daemon status`'s index rows."""

from __future__ import annotations

from coding_harness.client.render.index_lines import (
    TURN_ON,
    event_line,
    map_header,
    status_line,
)
from tests.unit.client.render.test_plain_view import Screen

ROOT = "/src/app"
READY_MAP = {
    "session": "s-1",
    "state": "ready",
    "map": "calc.py:\n  def add(a, b)\n",
    "tokens": 812,
    "budget": 1024,
    "files": 9,
    "done": 9,
    "total": 9,
    "error": None,
}


def test_the_map_header_says_its_size_or_why_there_is_no_map() -> None:
    assert map_header(READY_MAP) == ("repo map: 812 of 1,024 tokens, 9 files indexed", "bold")
    one = {**READY_MAP, "files": 1, "map": "", "tokens": 0}
    assert map_header(one)[0] == (
        "repo map: 0 of 1,024 tokens, 1 file indexed; no definitions to show yet"
    )
    building = {**READY_MAP, "state": "building", "map": "", "done": 3000, "total": 10000}
    assert map_header(building) == (
        "code index: building, 3,000 of 10,000 files; the map comes once it is ready",
        "dim",
    )
    walking = {**building, "total": 0}
    assert map_header(walking)[0] == "code index: building; the map comes once it is ready"
    off = map_header({**READY_MAP, "state": "off", "budget": 0})
    assert off == (TURN_ON, "yellow") and "agent.repo_map_tokens" in off[0]
    failed = {**READY_MAP, "state": "failed", "error": "database is locked\n\x1b[2Jsee log"}
    assert map_header(failed) == (
        "code index failed: database is locked ⏎ \\x1b[2Jsee log",
        "red",
    )
    assert map_header({**failed, "error": None})[0] == "code index failed: no reason given"


def test_garbled_numbers_count_as_nothing() -> None:
    odd = {**READY_MAP, "tokens": "812", "budget": float("nan"), "files": -3, "done": 10**400}
    assert map_header(odd)[0] == "repo map: 0 of 0 tokens, 0 files indexed"
    assert event_line({"state": "ready", "files": True, "seconds": float("inf")}) == (
        "code index ready: 0 files in 0.0 s",
        "dim",
    )


def test_an_index_event_reads_as_progress_ready_or_failed() -> None:
    start = {"root": ROOT, "state": "building", "done": 3000, "total": 10000, "files": 0}
    assert event_line(start) == ("indexing: 3,000/10,000 files", "dim")
    assert event_line({**start, "total": 0})[0] == "indexing the workspace"
    ready = {"root": ROOT, "state": "ready", "files": 10000, "seconds": 4.21}
    assert event_line(ready) == ("code index ready: 10,000 files in 4.2 s", "dim")
    failed = {"root": ROOT, "state": "failed", "error": "no space left on device"}
    assert event_line(failed) == ("code index failed: no space left on device", "red")


def test_a_status_line_per_index() -> None:
    ready = {"root": ROOT, "state": "ready", "files": 9812, "seconds": 4.2, "error": None}
    assert status_line(ready) == "/src/app  ready, 9,812 files, 4.2 s"
    building = {**ready, "state": "building", "done": 3000, "total": 10000, "seconds": 1.5}
    assert status_line(building) == "/src/app  building, 3,000 of 10,000 files, 1.5 s so far"
    failed = {**ready, "state": "failed", "seconds": 0.25, "error": "disk\rfull"}
    assert status_line(failed) == "/src/app  failed after 0.2 s: disk\\x0dfull"
    hostile = status_line({**ready, "root": "/x\n\x1b]0;pwn\x07"})
    assert "\x1b" not in hostile and "\n" not in hostile and "\x07" not in hostile


def building(done: int, total: int, seconds: float, root: str = ROOT) -> dict[str, object]:
    return {"root": root, "state": "building", "done": done, "total": total, "seconds": seconds}


def test_a_long_build_shows_its_first_line_and_its_last_on_stderr() -> None:
    screen = Screen()
    screen.emit("index.state", **building(0, 10000, 0.0), files=0)
    for done in (2500, 5000, 7500):  # about once a second: nothing more
        screen.emit("index.state", **building(done, 10000, done / 2500), files=done)
    screen.emit(
        "index.state", root=ROOT, state="ready", done=10000, total=10000, files=10000, seconds=4.2
    )
    assert screen.err.getvalue().splitlines() == [
        "indexing: 0/10,000 files",
        "code index ready: 10,000 files in 4.2 s",
    ]
    assert screen.out.getvalue() == ""


def test_a_build_is_announced_once_it_has_run_a_second() -> None:
    screen = Screen()
    screen.emit("index.state", **building(0, 0, 0.0))
    screen.emit("index.state", **building(40, 300, 1.0))
    screen.emit("index.state", **building(200, 300, 2.0))
    screen.emit("index.state", root=ROOT, state="ready", files=300, seconds=2.5)
    assert screen.err.getvalue().splitlines() == [
        "indexing: 40/300 files",
        "code index ready: 300 files in 2.5 s",
    ]


def test_a_quick_refresh_says_nothing() -> None:
    screen = Screen()
    for _ in range(3):  # after each edit: one file, well under a second
        screen.emit("index.state", **building(0, 1, 0.0), files=812)
        screen.emit("index.state", root=ROOT, state="ready", files=812, seconds=0.02)
    assert screen.err.getvalue() == ""


def test_a_failure_is_said_once_per_error_and_again_after_a_recovery() -> None:
    screen = Screen()
    failed = {"root": ROOT, "state": "failed", "error": "database is locked"}
    screen.emit("index.state", **failed)
    screen.emit("index.state", **failed)  # the retry fails alike
    screen.emit("index.state", **{**failed, "error": "disk full"})
    screen.emit("index.state", root=ROOT, state="ready", files=3, seconds=0.1)
    screen.emit("index.state", **failed)
    assert screen.err.getvalue().splitlines() == [
        "code index failed: database is locked",
        "code index failed: disk full",
        "code index failed: database is locked",
    ]


def test_quiet_shows_nothing_of_the_index() -> None:
    for options in ({"quiet": True}, {"quiet": True, "output_format": "json"}):
        screen = Screen(**options)
        screen.emit("index.state", **building(0, 10000, 0.0))
        screen.emit("index.state", root=ROOT, state="ready", files=10000, seconds=4.2)
        screen.emit("index.state", root=ROOT, state="failed", error="disk full")
        assert screen.err.getvalue() == "" and screen.out.getvalue() == ""


def test_the_lines_are_dim_at_a_terminal_and_plain_without_color() -> None:
    colored = Screen(color=True)
    colored.emit("index.state", **building(0, 10000, 0.0))
    colored.emit("index.state", root=ROOT, state="failed", error="disk full")
    assert colored.err.getvalue().splitlines() == [
        "\x1b[2mindexing: 0/10,000 files\x1b[0m",
        "\x1b[31mcode index failed: disk full\x1b[0m",
    ]
    plain = Screen(color=False)
    plain.emit("index.state", **building(0, 10000, 0.0))
    assert "\x1b" not in plain.err.getvalue()


def test_two_roots_are_followed_apart() -> None:
    screen = Screen()
    screen.emit("index.state", **building(0, 5000, 0.0, root="/a"))
    screen.emit("index.state", root="/b", state="ready", files=2, seconds=0.1)  # never announced
    screen.emit("index.state", root="/a", state="ready", files=5000, seconds=3.0)
    assert screen.err.getvalue().splitlines() == [
        "indexing: 0/5,000 files",
        "code index ready: 5,000 files in 3.0 s",
    ]
