"""No control character from the workspace, a model or the daemon reaches a terminal
raw, through any printer of the client; a name stays on its line.

Each printer gets the same hostile text: a clear-screen (`ESC[2J`), a title change
(`ESC]0;...BEL`), a carriage return, a C1 CSI (`\\x9b`), a right-to-left override,
the same as Markdown character references, and in names a newline followed by a
line that would pass for the printer's own. The only escapes allowed out are the
SGR color codes the printers add themselves.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from coding_harness.client.commands import sessions_list
from coding_harness.client.commands.mcp import print_servers, show_restart
from coding_harness.client.commands.undo import show_checkpoints, show_undo
from coding_harness.client.render.history import print_history
from coding_harness.client.render.plain_view import PlainView
from coding_harness.client.render.printer import PrintOptions, TurnPrinter
from coding_harness.client.render.rich_view import RichView, console_for
from coding_harness.client.render.sanitize import VisibleBytesWriter
from coding_harness.client.render.style import Style
from coding_harness.client.render.tables import (
    context_table,
    print_table,
    sessions_table,
    tokens_table,
)
from coding_harness.client.service.daemon_logs import tail

CONTROLS = "\x1b[2J\x1b]0;pwned\x07\r\x9b31m\u202e&#x202e;&rlm;&#13;"
NAME = f"src/evil{CONTROLS}\nFAKE LINE.py"  # a single-line value: a file name, an id
BODY = f"text{CONTROLS}\nsecond line of a body"  # a multi-line value: a reply, a notice
OUR_SGR = re.compile(r"\x1b\[[0-9;]*m")
BIDI = {chr(c) for c in (*range(0x200B, 0x2010), *range(0x2028, 0x202F), 0x2060, 0xFEFF)}
BIDI |= {chr(c) for c in range(0x2066, 0x206A)}


def assert_clean(output: str, *, shown: bool = True) -> None:
    """No raw control character but newline and tab (once our colors are taken out),
    no bidi control, and no line that starts with what followed a name's newline;
    `shown`: the hostile text is there, escaped."""
    text = OUR_SGR.sub("", output)
    raw = [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) < 0xA0]
    assert raw == [], f"raw control characters {raw!r} in {text!r}"
    assert not BIDI & set(text), f"a bidi control in {text!r}"
    starts = [
        line for line in text.split("\n") if line.lstrip(" │|*>-+0123456789").startswith("FAKE")
    ]
    assert starts == [], f"a name broke its line: {starts!r}"
    assert not shown or "\\x1b[2J" in text, "the hostile text was not shown at all"


def turn_events() -> list[tuple[str, dict[str, Any]]]:
    diff = f"--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-{CONTROLS}\n+{CONTROLS}\n"
    return [
        ("turn.started", {}),
        ("intent", {"route": NAME, "label": NAME}),
        ("plan", {"steps": [{"index": NAME, "text": NAME, "done": False}]}),
        ("context.compacted", {"reason": "manual", "messages_before": NAME}),
        ("reasoning.delta", {"text": BODY}),
        ("text.delta", {"text": BODY}),
        ("tool.call", {"name": NAME, "arguments": json.dumps({"path": NAME})}),
        ("tool.result", {}),
        ("diff", {"path": NAME, "diff": diff, "new_file": True}),
        ("approval.requested", {"path": NAME, "diff": diff + " ", "summary": NAME}),
        ("approval.resolved", {"decision": NAME, "client": NAME}),
        ("check.result", {"passed": False, "exit_code": NAME, "output": BODY}),
        ("undo", {"turn": NAME, "restored": [NAME], "skipped": [{"path": NAME, "reason": NAME}]}),
        ("hook", {"event": NAME, "command": NAME, "exit_code": 0}),
        ("mcp.state", {"name": NAME, "state": "failed", "error": NAME}),
        ("mcp.state", {"name": NAME, "state": NAME}),
        ("index.state", {"root": NAME, "state": "building", "total": 10_000}),
        ("index.state", {"root": NAME, "state": "failed", "error": NAME}),
        ("turn.queued", {"position": NAME}),
        ("notice", {"message": BODY}),
        ("error", {"message": f"the error: {BODY}"}),
    ]


def run_turn(printer: TurnPrinter) -> None:
    for kind, data in turn_events():
        printer.event(kind, data, {"params": data})
    printer.final({"reply": BODY, "exit_code": 0})


@pytest.mark.parametrize("stream_reply", [True, False])
@pytest.mark.parametrize("color", [True, False])
def test_the_plain_view_shows_every_event_escaped(stream_reply: bool, color: bool) -> None:
    out, err = io.StringIO(), io.StringIO()
    view = PlainView(Style(err, color=color), out, stream_reply=stream_reply)
    run_turn(TurnPrinter(view, PrintOptions(), out))
    assert_clean(out.getvalue())
    assert_clean(err.getvalue())


def test_the_rich_view_shows_every_event_escaped_markdown_included() -> None:
    out, err = io.StringIO(), io.StringIO()
    view = RichView(
        console_for(out, color=True, terminal=True, width=200),
        console_for(err, color=True, terminal=True, width=200),
    )
    run_turn(TurnPrinter(view, PrintOptions(), out))
    printer = TurnPrinter(view, PrintOptions(stream_reply=False), out)
    printer.final({"reply": f"# {BODY}\n\n[link]({NAME})\n\n```\n{BODY}\n```\n", "exit_code": 0})
    live = RichView(console_for(io.StringIO(), color=True), console_for(io.StringIO(), color=True))
    live.reply_delta(BODY)
    live.busy(NAME)
    assert_clean("\n".join(line for _, line in live.status_lines(80)))
    assert "second line of a body" in out.getvalue()  # a reply keeps its lines
    assert_clean(out.getvalue())
    assert_clean(err.getvalue())


def capture(print_to: Callable[[Style, Style], object], color: bool = False) -> str:
    out, err = io.StringIO(), io.StringIO()
    print_to(Style(out, color=color), Style(err, color=color))
    return out.getvalue() + err.getvalue()


def test_harness_undo_and_its_listing_escape_every_name() -> None:
    result = {
        "turn": NAME,
        "undo_turn": NAME,
        "restored": [NAME],
        "skipped": [{"path": NAME, "reason": BODY}],
        "diffs": [{"path": NAME, "diff": f"--- a\n+++ b\n@@ -1 +1 @@\n-{CONTROLS}\n+x\n"}],
    }
    assert_clean(capture(lambda out, err: show_undo(result, err, out), color=True))
    listing = {
        "checkpoints": [{"turn": NAME, "at": 0, "files": [NAME, NAME]}],
        "dropped": [NAME],
    }
    assert_clean(capture(lambda out, err: show_checkpoints(listing, NAME, out)))
    assert_clean(capture(lambda out, err: show_checkpoints({}, NAME, out)))


def hostile_session() -> dict[str, Any]:
    return {
        "session": NAME,
        "cwd": NAME,
        "state": NAME,
        "clients": 1,
        "last_activity": 0.0,
        "usage": {"prompt_tokens": 1, "completion_tokens": 2},
        "cost_usd": None,
        "options": {"mode": NAME},
    }


def test_harness_sessions_escapes_every_cell(capsys: pytest.CaptureFixture[str]) -> None:
    sessions_list._print_lines([hostile_session()])
    assert_clean(capsys.readouterr().out)
    out = io.StringIO()
    print_table(sessions_table([hostile_session()], now=1.0), out, color=True)
    assert_clean(out.getvalue())


def test_tables_escape_every_cell() -> None:
    context = {
        "total_tokens": 5,
        "messages": [{"index": NAME, "role": NAME, "tokens": 1, "chars": 1, "preview": BODY}],
        "mcp_servers": [{"name": NAME, "tokens": 1, "chars": 1, "tools": 1}],
    }
    stats = {
        "session": {"usage": {}, "provider": NAME, "pricing": {NAME: 1.0}},
        "daily": [{"day": NAME, "provider": NAME}],
    }
    for table in (context_table(context), tokens_table(stats)):
        out = io.StringIO()
        print_table(table, out, color=True)
        assert_clean(out.getvalue())


def test_mcp_list_and_restart_escape_what_servers_say() -> None:
    server = {"name": NAME, "state": "failed", "error": BODY, "tools": [NAME], "pid": 1}
    for shown in ([server], [{**server, "state": NAME}]):
        out = io.StringIO()
        print_servers(shown, out)
        assert_clean(out.getvalue())
    out = io.StringIO()
    show_restart(server, out)
    assert_clean(out.getvalue())


def test_history_escapes_messages_and_tool_calls() -> None:
    messages = [
        {"role": "user", "content": BODY},
        {"role": "assistant", "content": BODY},
        {"role": "assistant", "tool_calls": [{"function": {"name": NAME, "arguments": NAME}}]},
    ]
    assert_clean(capture(lambda out, err: print_history(messages, out)))


def test_the_daemon_log_is_escaped_as_it_is_copied(tmp_path: Path) -> None:
    log = tmp_path / "harnessd.log"
    log.write_bytes(f"WARNING no checkpoint of {NAME}: gone\n".encode() + b"\xff\x9b\n")
    copied = io.BytesIO()
    writer = VisibleBytesWriter(copied)
    for line in tail(log, 10):
        for cut in (line[:17], line[17:]):  # a write may end inside a character
            writer.write(cut)
    text = copied.getvalue().decode()
    assert "\\xff" in text and "\\x9b" in text
    assert_clean(text.replace("\nFAKE LINE", " FAKE LINE"))  # a log's lines are its own
