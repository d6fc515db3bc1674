"""`/map`: the header, then the map as the repository wrote it, never as markup or
escapes; while building, off or failed, the header alone; and where it is listed."""

from __future__ import annotations

import io
from typing import Any

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from coding_harness.client.render.style import Style
from coding_harness.client.repl.completer import SlashCompleter
from coding_harness.client.repl.slash_commands import SlashCommands
from coding_harness.protocol import errors, methods

MAP = "calc.py:\n│ def add(a, b):\n│ class [bold]Calc[/bold]:\x1b[2J\u202e\n"


class Answers:
    """A connection that answers `session.map` with `answer`, recording what it was asked."""

    def __init__(self, **answer: object) -> None:
        self.answer: dict[str, Any] = {
            "session": "s-1",
            "state": "ready",
            "map": MAP,
            "tokens": 17,
            "budget": 1024,
            "files": 1,
            "done": 1,
            "total": 1,
            "error": None,
            **answer,
        }
        self.asked: list[tuple[str, dict[str, Any]]] = []

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.asked.append((method, params or {}))
        if method != methods.SESSION_MAP:
            raise errors.MethodNotFound(f"no method {method}")
        return self.answer


def run(conn: Answers, line: str, capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    err = io.StringIO()
    SlashCommands(conn, "s-1", Style(err)).handle(line)  # type: ignore[arg-type]
    return capsys.readouterr().out, err.getvalue()


def test_the_map_comes_under_its_header_as_plain_text(capsys: pytest.CaptureFixture[str]) -> None:
    conn = Answers()
    out, err = run(conn, "/map", capsys)
    assert conn.asked == [(methods.SESSION_MAP, {"session": "s-1"})]
    assert err == "repo map: 17 of 1,024 tokens, 1 file indexed\n"
    assert out == "calc.py:\n│ def add(a, b):\n│ class [bold]Calc[/bold]:\\x1b[2J<U+202E>\n"


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (
            {"state": "building", "map": "", "done": 3000, "total": 10000},
            "code index: building, 3,000 of 10,000 files; the map comes once it is ready",
        ),
        ({"state": "off", "map": "", "budget": 0}, "agent.repo_map_tokens is 0"),
        ({"state": "failed", "map": MAP, "error": "disk full"}, "code index failed: disk full"),
        ({"map": "  \n"}, "; no definitions to show yet"),
    ],
)
def test_without_a_map_the_header_says_why(
    capsys: pytest.CaptureFixture[str], answer: dict[str, object], says: str
) -> None:
    out, err = run(Answers(**answer), "/map", capsys)
    assert says in err and err.count("\n") == 1
    assert out == ""


def test_an_argument_is_refused_and_an_older_daemon_is_one_red_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    conn = Answers()
    out, err = run(conn, "/map calc.py", capsys)
    assert (out, err, conn.asked) == ("", "usage: /map (it takes no argument)\n", [])

    class Older(Answers):
        def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
            raise errors.MethodNotFound("unknown method session.map")

    out, err = run(Older(), "/map", capsys)
    assert err == "unknown method session.map\n" and out == ""


def test_map_is_in_help_and_completes(capsys: pytest.CaptureFixture[str]) -> None:
    commands = SlashCommands(Answers(), "s-1", Style(io.StringIO()))  # type: ignore[arg-type]
    assert "/map" in commands.names()
    commands.handle("/help")
    assert any(line.startswith("/map ") for line in capsys.readouterr().out.splitlines())
    completer = SlashCompleter(commands.names)
    found = completer.get_completions(Document("/ma"), CompleteEvent(completion_requested=True))
    assert [c.text for c in found] == ["/map"]
