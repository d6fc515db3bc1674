"""The printer and the plain view: what each event shows, where, and in which format."""

from __future__ import annotations

import io
import json

from coding_harness.client.render.diff_lines import LONG_DIFF, numbered_lines
from coding_harness.client.render.plain_view import PlainView
from coding_harness.client.render.printer import PrintOptions, TurnPrinter, result_object
from coding_harness.client.render.sanitize import VisibleWriter, one_line, visible
from coding_harness.client.render.style import Style
from coding_harness.client.render.tool_line import tool_line

DIFF = (
    "--- a/calc.py\n+++ b/calc.py\n@@ -10,3 +10,3 @@\n"
    " def add(a, b):\n-    return a - b\n+    return a + b\n \n"
)
HOSTILE = "ok\x1b[2K\rfake line\u202egnp.exe\u200b\x07"


class Screen:
    """A printer over a plain view, writing to two strings."""

    def __init__(self, *, color: bool = False, stream: bool = False, **options: object) -> None:
        self.out, self.err = io.StringIO(), io.StringIO()
        view = PlainView(Style(self.err, color=color), self.out, stream_reply=stream)
        self.printer = TurnPrinter(view, PrintOptions(**options), self.out)  # type: ignore[arg-type]
        self.seq = 0

    def emit(self, event_kind: str, **data: object) -> None:
        self.seq += 1
        params = {"session": "s-1", "seq": self.seq, "kind": event_kind, "data": data, "at": 1.5}
        note = {"jsonrpc": "2.0", "method": "event", "params": params}
        self.printer.event(event_kind, data, note)

    def finish(self, reply: str, code: int = 0, **extra: object) -> None:
        self.printer.final({"reply": reply, "exit_code": code, "session": "s-1", **extra})


def test_off_a_terminal_the_reply_is_printed_once_as_written() -> None:
    screen = Screen()
    screen.emit("turn.started", turn="t1", text="hi")
    for piece in ("Hel", "lo **wor", "ld**\n\n- a"):
        screen.emit("text.delta", text=piece)
    screen.finish("Hello **world**\n\n- a")
    assert screen.out.getvalue() == "Hello **world**\n\n- a\n"


def test_streaming_view_writes_deltas_and_ends_the_line() -> None:
    screen = Screen(stream=True)
    screen.emit("text.delta", text="one ")
    screen.emit("text.delta", text="two")
    screen.emit("tool.call", id="c", name="read_file", arguments='{"path": "a.py"}')
    screen.finish("one two")
    assert screen.out.getvalue() == "one two\n"
    assert "• read_file a.py" in screen.err.getvalue()


def test_escapes_and_bidi_controls_are_shown_not_obeyed() -> None:
    screen = Screen(color=True)
    screen.emit("tool.call", id="c", name="run_shell", arguments=json.dumps({"command": HOSTILE}))
    screen.emit("notice", message=HOSTILE)
    screen.emit("diff", path="x.py", diff=f"@@ -1 +1 @@\n-{HOSTILE}\n+fine\n", new_file=False)
    screen.finish(HOSTILE)
    for text in (screen.out.getvalue(), screen.err.getvalue()):
        assert "\r" not in text and "\u202e" not in text and "\u200b" not in text
        assert "\x1b[2K" not in text and "\x07" not in text
    assert "ok\\x1b[2K\\x0dfake line<U+202E>gnp.exe<U+200B>\\x07" in screen.out.getvalue()
    assert "<U+202E>" in screen.err.getvalue()


def test_visible_and_one_line() -> None:
    assert visible("a\tb\nc\x1b") == "a\tb\nc\\x1b"
    assert one_line("first\n  second\x1b", 100) == "first ⏎ second\\x1b"
    assert one_line("x" * 50, 10) == "x" * 9 + "…"


def test_diff_lines_carry_old_and_new_numbers() -> None:
    lines = numbered_lines(DIFF)
    assert lines[:3] == [(line, "cyan") for line in DIFF.splitlines()[:3]]
    assert lines[3:] == [
        (" 10  10  def add(a, b):", ""),
        (" 11     -    return a - b", "red"),
        ("     11 +    return a + b", "green"),
        (" 12  12  ", ""),
    ]


def test_a_long_diff_is_shown_in_full_between_a_header_and_a_footer() -> None:
    body = "".join(f"+line {n}\n" for n in range(1, 201))
    lines = numbered_lines(f"--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,200 @@\n{body}", "big.txt")
    assert len(lines) == 203 + 2
    assert lines[0][0].startswith("── diff of big.txt: 203 lines (+200 -0), shown in full")
    assert lines[-1][0] == "── end of the diff of big.txt (203 lines) ──"
    assert lines[-2][0] == "    200 +line 200"
    assert LONG_DIFF < 203


def test_diff_colors_follow_the_style() -> None:
    colored, plain = Screen(color=True), Screen(color=False)
    for screen in (colored, plain):
        screen.emit("diff", path="calc.py", diff=DIFF, new_file=False)
    assert "\x1b[32m     11 +    return a + b\x1b[0m" in colored.err.getvalue()
    assert "\x1b[31m 11     -    return a - b\x1b[0m" in colored.err.getvalue()
    assert "\x1b[36m--- a/calc.py" in colored.err.getvalue()
    assert "\x1b" not in plain.err.getvalue()


def test_intent_label_is_colored_by_route() -> None:
    screen = Screen(color=True)
    for route, code in (("coding", "32"), ("general", "36"), ("hybrid", "33")):
        screen.emit("intent", route=route, source="keywords", label="why")
        assert f"\x1b[{code}mintent: {route} (why)\x1b[0m" in screen.err.getvalue()


def test_reasoning_is_dimmed_on_standard_error_apart_from_the_reply() -> None:
    screen = Screen(color=True, stream=True)
    screen.emit("reasoning.delta", text="let me think")
    screen.emit("text.delta", text="The answer.")
    screen.finish("The answer.")
    assert screen.out.getvalue() == "The answer.\n"
    assert screen.err.getvalue() == "\x1b[2mlet me think\x1b[0m\n"


def test_quiet_leaves_the_reply_and_what_needs_a_person() -> None:
    screen = Screen(quiet=True)
    screen.emit("turn.started", turn="t1", text="fix")
    screen.emit("intent", route="coding")
    screen.emit("reasoning.delta", text="hmm")
    screen.emit("tool.call", id="c", name="read_file", arguments="{}")
    screen.emit("notice", message="retrying in 3 s")
    screen.emit("diff", path="calc.py", diff=DIFF, new_file=False)
    assert screen.err.getvalue() == ""
    screen.emit(
        "approval.requested",
        request="a-1",
        kind="edit",
        path="calc.py",
        diff=DIFF,
        summary="edit calc.py (+1 -1)",
    )
    screen.emit("turn.queued", turn="t2", position=1)
    screen.emit("error", message="no model server", kind="ModelUnavailable")
    err = screen.err.getvalue()
    assert "+    return a + b" in err and "edit calc.py (+1 -1)" in err
    assert "queued behind the running turn" in err and "error: no model server" in err
    screen.finish("done")
    assert screen.out.getvalue() == "done\n"


def test_an_approval_does_not_repeat_the_diff_just_shown() -> None:
    screen = Screen()
    screen.emit("diff", path="calc.py", diff=DIFF, new_file=False)
    screen.emit(
        "approval.requested",
        request="a-1",
        kind="edit",
        path="calc.py",
        diff=DIFF,
        summary="edit calc.py",
    )
    assert screen.err.getvalue().count("+    return a + b") == 1


def test_json_prints_only_the_result_object_with_the_contract_keys() -> None:
    screen = Screen(output_format="json")
    screen.emit("text.delta", text="Fixed.")
    screen.emit("tool.call", id="c", name="read_file", arguments="{}")
    assert screen.out.getvalue() == ""
    usage = {"prompt_tokens": 300, "cached_tokens": 20, "completion_tokens": 40, "extra": 1}
    screen.finish(
        "Fixed.",
        0,
        turn="t1",
        usage=usage,
        cost_usd=0.0012,
        files_changed=["a.py"],
        interrupted=False,
    )
    result = json.loads(screen.out.getvalue())
    assert list(result) == [
        "reply",
        "exit_code",
        "session",
        "usage",
        "cost_usd",
        "files_changed",
        "check",
    ]
    assert result["usage"] == {"prompt_tokens": 300, "cached_tokens": 20, "completion_tokens": 40}
    assert (result["cost_usd"], result["files_changed"]) == (0.0012, ["a.py"])
    assert "• read_file" in screen.err.getvalue()  # standard error is as in text


def test_stream_json_prints_each_event_then_the_result() -> None:
    screen = Screen(output_format="stream-json")
    screen.emit("turn.started", turn="t1", text="hi")
    screen.emit("text.delta", text="Hi.")
    screen.finish("Hi.")
    lines = [json.loads(line) for line in screen.out.getvalue().splitlines()]
    assert [line.get("kind") for line in lines[:2]] == ["turn.started", "text.delta"]
    assert lines[1] == {
        "session": "s-1",
        "seq": 2,
        "kind": "text.delta",
        "data": {"text": "Hi."},
        "at": 1.5,
    }
    assert lines[2] == result_object({"reply": "Hi.", "exit_code": 0, "session": "s-1"})
    assert lines[2]["usage"] == {"prompt_tokens": 0, "cached_tokens": 0, "completion_tokens": 0}


def test_tool_lines_are_short_and_one_line() -> None:
    assert tool_line("read_file", '{"path": "calc.py"}') == "• read_file calc.py"
    edit = json.dumps({"path": "calc.py", "old": "a\nb", "new": "x" * 500})
    assert tool_line("propose_edit", edit) == "• propose_edit calc.py old=<3 chars> new=<500 chars>"
    assert tool_line("grep", '{"pattern": "def add", "path": "."}') == "• grep 'def add' path=."
    cut = '{"path": "big.py", "old": "aaaaaaaa'
    assert tool_line("propose_edit", cut) == "• propose_edit big.py (arguments cut)"
    assert len(tool_line("run_shell", json.dumps({"command": "x" * 59}), width=40)) == 42


def test_a_carriage_return_cannot_split_a_changed_line() -> None:
    lines = numbered_lines("@@ -1 +1 @@\n+a\rb\x0bc\u2028d\x1ce\n")
    assert lines[1:] == [("      1 +a\\x0db\\x0bc<U+2028>d\\x1ce", "green")]


def test_a_visible_writer_neutralises_whatever_is_written_through_it() -> None:
    target = io.StringIO()
    writer = VisibleWriter(target)
    print("reply\x1b[2J\rhidden\u202e", file=writer)  # type: ignore[arg-type]
    assert target.getvalue() == "reply\\x1b[2J\\x0dhidden<U+202E>\n"
    assert not writer.isatty()


def test_a_manual_compaction_is_shown_to_every_terminal_and_quiet_hides_it() -> None:
    compacted = {"reason": "manual", "messages_before": 12, "messages_after": 1}
    screen, quiet = Screen(), Screen(quiet=True)
    for each in (screen, quiet):
        each.emit("context.compacted", **compacted)
        each.emit("context.compacted", **{**compacted, "reason": "limit"})  # has its notice
    assert screen.err.getvalue() == "conversation compacted: 12 messages -> 1\n"
    assert quiet.err.getvalue() == ""


def test_a_long_wait_for_the_model_gets_a_line_now_and_then() -> None:
    screen = Screen()
    screen.emit("turn.started", turn="t1", text="hi")
    for seconds in range(5, 125, 5):  # the daemon's cadence: every 5 s
        screen.emit("model.waiting", seconds=float(seconds), done=False)
    lines = screen.err.getvalue().splitlines()
    assert lines == [f"waiting for the model ({n} s)" for n in (10, 30, 60, 90, 120)]
    screen.emit("model.waiting", seconds=121.0, done=True)
    for seconds in (5.0, 10.0):  # a new wait (the retry) starts counting again
        screen.emit("model.waiting", seconds=seconds, done=False)
    assert screen.err.getvalue().splitlines()[-1] == "waiting for the model (10 s)"
    screen.finish("ok")
    assert screen.out.getvalue() == "ok\n"


def test_quiet_and_short_waits_print_nothing() -> None:
    quiet = Screen(quiet=True)
    for seconds in range(5, 125, 5):
        quiet.emit("model.waiting", seconds=float(seconds), done=False)
    short = Screen()
    short.emit("model.waiting", seconds=5.0, done=False)
    short.emit("model.waiting", seconds=7.0, done=True)
    assert quiet.err.getvalue() == "" and short.err.getvalue() == ""


def test_stream_json_passes_the_wait_events_through() -> None:
    screen = Screen(output_format="stream-json")
    screen.emit("model.waiting", seconds=10.0, done=False)
    [line] = screen.out.getvalue().splitlines()
    assert json.loads(line)["kind"] == "model.waiting"
    assert screen.err.getvalue() == "waiting for the model (10 s)\n"


def test_an_undo_from_another_client_is_shown_with_what_it_skipped() -> None:
    screen = Screen()
    screen.emit(
        "undo",
        turn="t-1",
        restored=["calc.py", "new.py"],
        skipped=[{"path": "mine.py", "reason": "changed since the agent wrote it"}],
    )
    shown = screen.err.getvalue()
    assert "undo of turn t-1: put back calc.py, new.py" in shown
    assert "not put back: mine.py: changed since the agent wrote it" in shown
    assert screen.out.getvalue() == ""
