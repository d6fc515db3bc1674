"""The rich view, rendered by Consoles writing to strings: colors on and off, Markdown,
escapes neutralised, markup never interpreted, diffs numbered, the status area."""

from __future__ import annotations

import io
import re

import pytest

from coding_harness.client.render.printer import PrintOptions, TurnPrinter
from coding_harness.client.render.rich_view import RichView, console_for

DIFF = (
    "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n"
    " def add(a, b):\n-    return a - b\n+    return a + b\n"
)
COLOR_CODE = re.compile(r"\x1b\[[0-9;]*(3[0-7]|9[0-7]|38;)")
SGR = re.compile(r"\x1b\[[0-9;]*m")


class Area:
    """A StatusArea that records when it is shown and hidden."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def show(self) -> None:
        self.calls.append("show")

    def hide(self) -> None:
        self.calls.append("hide")


class Terminal:
    def __init__(self, *, color: bool = True, quiet: bool = False) -> None:
        self.out, self.err = io.StringIO(), io.StringIO()
        self.area = Area()
        self.view = RichView(
            console_for(self.out, color=color, width=80, terminal=True),
            console_for(self.err, color=color, width=80, terminal=True),
            self.area,
        )
        self.printer = TurnPrinter(self.view, PrintOptions(quiet=quiet), self.out)  # type: ignore[arg-type]

    def emit(self, event_kind: str, **data: object) -> None:
        self.printer.event(event_kind, data, {"params": {"kind": event_kind, "data": data}})

    def answer(self, text: str, code: int = 0) -> None:
        self.emit("turn.started", turn="t1", text="q")
        self.emit("text.delta", text=text)
        self.printer.final({"reply": text, "exit_code": code})


def test_the_answer_is_rendered_as_markdown() -> None:
    term = Terminal()
    term.answer("# Result\n\nThe **bug** was `a - b`.\n\n- one\n- two\n")
    out = term.out.getvalue()
    assert "Result" in out and "bug" in out and " • " in out
    assert "**" not in out and "# Result" not in out
    assert "\x1b[1m" in out  # bold


def test_rich_markup_in_model_text_is_not_interpreted() -> None:
    term = Terminal()
    term.answer("[red]alert[/red] and [link=http://evil.example]click[/link] :smile:")
    out = term.out.getvalue()
    assert "[red]alert[/red]" in out
    assert "[link=http://evil.example]click[/link]" in out and ":smile:" in out
    assert "\x1b]8;" not in out  # no hidden hyperlink
    assert "\x1b[31m" not in out  # nothing turned red


def test_markdown_links_show_their_target() -> None:
    term = Terminal()
    term.answer("see [the docs](http://phish.example/login)")
    assert "the docs (http://phish.example/login)" in SGR.sub("", term.out.getvalue())
    assert "\x1b]8;" not in term.out.getvalue()


@pytest.mark.parametrize("where", ["answer", "line", "diff", "reasoning"])
def test_escapes_and_bidi_controls_are_neutralised(where: str) -> None:
    term = Terminal()
    hostile = "before\x1b[2J\x1b[1A\rafter\u202eevil\u2066\u200b"
    if where == "answer":
        term.answer(hostile)
    elif where == "line":
        term.emit("notice", message=hostile)
    elif where == "diff":
        term.emit("diff", path="x", diff=f"@@ -1 +1 @@\n-old\n+{hostile}\n", new_file=False)
    else:
        term.emit("reasoning.delta", text=hostile)
        term.printer.final({"reply": "", "exit_code": 0})
    text = term.out.getvalue() + term.err.getvalue()
    assert "\x1b[2J" not in text and "\x1b[1A" not in text and "\r" not in text
    assert "\u202e" not in text and "\u2066" not in text and "\u200b" not in text
    assert "\\x1b[2J\\x1b[1A\\x0dafter<U+202E>evil<U+2066><U+200B>" in text


def test_diffs_are_numbered_and_colored() -> None:
    term = Terminal()
    term.emit("diff", path="calc.py", diff=DIFF, new_file=False)
    err = term.err.getvalue()
    assert "\x1b[31m  2     -    return a - b\x1b[0m" in err
    assert "\x1b[32m      2 +    return a + b\x1b[0m" in err
    assert "\x1b[36m@@ -1,2 +1,2 @@\x1b[0m" in err
    assert "  1   1  def add(a, b):" in err


def test_without_color_nothing_is_colored_but_the_layout_stays() -> None:
    term = Terminal(color=False)
    term.emit("diff", path="calc.py", diff=DIFF, new_file=False)
    term.emit("intent", route="coding")
    term.answer("# Title\n\n**bold** text")
    text = term.out.getvalue() + term.err.getvalue()
    assert not COLOR_CODE.search(text)
    assert "      2 +    return a + b" in text and "intent: coding" in text
    assert "**" not in text


def test_intent_colors() -> None:
    term = Terminal()
    for route, code in (("coding", "32"), ("general", "36"), ("hybrid", "33")):
        term.emit("intent", route=route)
        assert f"\x1b[{code}mintent: {route}\x1b[0m" in term.err.getvalue()


def test_reasoning_is_dimmed_on_standard_error_before_the_answer() -> None:
    term = Terminal()
    term.emit("turn.started", turn="t1", text="q")
    term.emit("reasoning.delta", text="first I think")
    assert term.view.status_lines(80)[0] == ("dim", "first I think")
    term.emit("text.delta", text="The answer.")
    term.printer.final({"reply": "The answer.", "exit_code": 0})
    assert "first I think" in term.err.getvalue() and "\x1b[2;3m" in term.err.getvalue()
    assert "first I think" not in term.out.getvalue()
    assert "The answer." in term.out.getvalue()


def test_quiet_shows_no_spinner_no_tools_no_reasoning() -> None:
    term = Terminal(quiet=True)
    term.emit("turn.started", turn="t1", text="q")
    term.emit("reasoning.delta", text="thinking hard")
    term.emit("tool.call", id="c", name="read_file", arguments="{}")
    assert term.view.status_lines(80) == []
    term.answer("Only this.")
    assert term.err.getvalue() == ""
    assert "Only this." in term.out.getvalue()


def test_the_status_area_shows_a_spinner_then_the_streaming_tail() -> None:
    term = Terminal()
    term.emit("turn.started", turn="t1", text="q")
    [(style, spinner)] = term.view.status_lines(80)
    assert style == "cyan" and re.fullmatch(r". thinking \d+\.\ds", spinner)
    term.emit("text.delta", text="".join(f"line {n}\n" for n in range(20)) + "partial")
    lines = term.view.status_lines(80)
    assert [text for _, text in lines] == [*(f"line {n}" for n in range(13, 20)), "partial"]
    assert term.area.calls[-1] == "show"
    term.emit("tool.call", id="c", name="run_shell", arguments='{"command": "make check"}')
    assert term.area.calls[-3:] == ["hide", "hide", "show"]  # answer printed, line, spinner
    assert term.view.status_lines(80)[-1][1].startswith(tuple("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"))
    term.printer.final({"reply": "done", "exit_code": 0})
    assert term.area.calls[-1] == "hide" and not term.view.active()


def test_a_reply_nothing_streamed_is_rendered_only_for_a_successful_turn() -> None:
    ok, failed = Terminal(), Terminal()
    ok.printer.final({"reply": "from a non-streaming model", "exit_code": 0})
    failed.printer.final({"reply": "no model server at ...", "exit_code": 1})
    assert "from a non-streaming model" in ok.out.getvalue()
    assert failed.out.getvalue() == ""


def test_a_wait_for_the_model_is_counted_on_the_spinner_then_ends() -> None:
    term = Terminal()
    term.emit("turn.started", turn="t1", text="q")
    term.emit("model.waiting", seconds=35.0, done=False)
    [(style, spinner)] = term.view.status_lines(80)
    assert style == "cyan" and re.fullmatch(r". waiting for the model \(3[56] s\)", spinner)
    assert term.area.calls[-1] == "show"
    term.emit("model.waiting", seconds=40.0, done=True)
    assert re.fullmatch(r". thinking \d+\.\ds", term.view.status_lines(80)[0][1])
    term.emit("model.waiting", seconds=5.0, done=False)
    term.emit("text.delta", text="Here.")
    assert [text for _, text in term.view.status_lines(80)] == ["Here."]
    assert "waiting" not in term.err.getvalue()  # a status, never a printed line


def test_quiet_shows_no_wait() -> None:
    term = Terminal(quiet=True)
    term.emit("turn.started", turn="t1", text="q")
    term.emit("model.waiting", seconds=35.0, done=False)
    assert term.view.status_lines(80) == [] and term.area.calls == []


def test_a_command_approval_shows_the_command_and_no_empty_diff() -> None:
    term = Terminal(color=False)
    term.emit(
        "approval.requested",
        request="a-1",
        kind="command",
        path="",
        diff="",
        summary="run the command `uv run pytest` in the workspace",
    )
    shown = re.sub(r"\x1b\[[0-9;]*m", "", term.err.getvalue())
    assert shown.strip() == "run the command `uv run pytest` in the workspace"


def spinner_labels(term: Terminal) -> list[str]:
    return [text for style, text in term.view.status_lines(80) if style == "cyan"]


def test_an_mcp_start_that_fails_after_the_turn_stops_its_spinner() -> None:
    """Issue 26, item 10: a server's retry after the turn ended spun `starting 35.9s`
    for good; a state ends when it ends."""
    term = Terminal()
    term.emit("turn.started", turn="t1", text="q")
    term.emit("mcp.state", name="time", state="starting", error=None)
    assert any("MCP server time starting" in label for label in spinner_labels(term))
    term.emit("mcp.state", name="time", state="failed", error="exited with status 1")
    labels = spinner_labels(term)
    assert len(labels) == 1 and "thinking" in labels[0] and "starting" not in labels[0]
    term.emit("text.delta", text="hi")
    term.printer.final({"reply": "hi", "exit_code": 0})
    term.emit("mcp.state", name="time", state="starting", error=None)  # a retry, turn over
    term.emit("mcp.state", name="time", state="failed", error="exited with status 1")
    assert spinner_labels(term) == []
    assert not term.view.active()
