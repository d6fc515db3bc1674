"""What a turn's events show, and where: the policy shared by every view.

The reply goes to standard output; everything else (tool lines, diffs,
checks, notices, errors) goes to standard error, so `harness -p ... > out`
captures the answer alone. Standard error shows the same in every output
format; `-q` keeps it to what a person must see: errors, waiting notices, and
a change put to them for approval with its full diff. `stream-json` writes
each event as one JSON line on standard output; both JSON formats end with
`result_object` (`result_json.py`), and nothing else goes to standard output. While the model
has not started answering, `model.waiting` events say for how long; a view
shows that as it can (a status line, a line now and then), and `-q` not at all.

How things look is a `View`'s job: `plain_view.PlainView` (ANSI or none, the
lean default) or `rich_view.RichView` (a terminal: Markdown, spinner). Every
view makes text `visible` (no control character reaches the terminal raw);
here, values that must stay on their line (paths, ids, labels, a plan step)
are made a `field` first, so a newline in a file name cannot fake a line.
"""

from __future__ import annotations

from coding_harness.client.render.result_json import result_object
from coding_harness.client.render.sanitize import field
from coding_harness.client.render.style import INTENT_COLORS

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

    from coding_harness.client.render.view_protocol import View

CHECK_OUTPUT_LINES = 12
HOOK_COMMAND_SHOWN = 60
# A code index build is announced once it is this big or has run this long: the
# quick refresh after an edit says nothing.
INDEX_ANNOUNCE_FILES = 500
INDEX_ANNOUNCE_SECONDS = 1.0


class PrintOptions:
    def __init__(
        self,
        *,
        quiet: bool = False,
        stream_reply: bool = True,
        output_format: str = "text",
        verbose: bool = False,
        more: str = "--verbose",
    ) -> None:
        self.quiet = quiet
        self.stream_reply = stream_reply
        self.output_format = output_format
        self.verbose = verbose  # a command's output whole, not folded
        self.more = more  # what shows a folded output whole: a flag, or the REPL's key


class TurnPrinter:
    def __init__(self, view: View, options: PrintOptions, out: TextIO) -> None:
        self.view = view
        self.options = options
        self.out = out
        self.chatter = not options.quiet
        self._shown_diffs: set[tuple[str, str]] = set()
        self._errors_shown: set[str] = set()
        self._mcp_states: dict[str, str] = {}  # the last line shown for each MCP server
        self._indexing: set[str] = set()  # the roots whose build was announced
        self._index_errors: dict[str, str] = {}  # the last failure shown for each root
        self._at: float | None = None  # when the event being shown was emitted
        self._calls: dict[str, str] = {}  # the tool of each call id, for its result
        self._check: tuple[str, float | None] | None = None  # the running check, since
        self._rejected: list[str] = []  # the files of edits rejected in this turn
        self._mcp_busy: dict[str, str] = {}  # the spinner label of each starting MCP server
        self._in_turn = False
        self.last_output: list[tuple[str, str]] = []  # the last command's output, whole
        # The approval requests this client answered (`TurnDriver.respond` adds them).
        self.own_answers: set[str] = set()

    def event(self, kind: str, data: dict[str, Any], raw: dict[str, Any]) -> None:
        if self.options.output_format == "stream-json":
            import json  # the JSON formats only: a text run does without it

            self.out.write(json.dumps(raw.get("params", raw), ensure_ascii=False) + "\n")
            self.out.flush()
        handler = getattr(self, "_on_" + kind.replace(".", "_"), None)
        if handler is not None:
            at = raw.get("params", {}).get("at") if isinstance(raw.get("params"), dict) else None
            self._at = float(at) if isinstance(at, int | float) else None
            handler(data)

    def final(self, result: dict[str, Any]) -> None:
        """The end of a turn: the reply (text) or the result object (JSON formats)."""
        if self.options.output_format in ("json", "stream-json"):
            import json

            self.view.pause()
            self.out.write(json.dumps(result_object(result), ensure_ascii=False) + "\n")
            self.out.flush()
            return
        code = result.get("exit_code")
        reply = str(result.get("reply") or "")
        if reply.strip() in self._errors_shown:  # already said once, as `error: ...`
            reply = ""
        self._errors_shown.clear()
        self._in_turn = False
        self.view.turn_done(reply, code if isinstance(code, int) else 1)
        if self._rejected:  # whatever the reply says ("Fixed it"), nothing was written
            files = ", ".join(field(path) for path in self._rejected)
            self.notice(f"edit rejected: {files} not written", "yellow")
            self._rejected.clear()

    def show_last_output(self) -> None:
        """The last command's or MCP tool's output, every line (the REPL's key)."""
        if not self.last_output:
            self.notice("no command output to show yet", "dim")
        for text, style in self.last_output:
            self.view.line(text, style)

    def notice(self, text: str, style: str = "yellow") -> None:
        """A line that is always shown (a question's context, a wait, a cancel)."""
        self.view.line(text, style)

    def chat(self, text: str, style: str = "") -> None:
        """A line that -q and the JSON formats leave out."""
        if self.chatter:
            self.view.line(text, style)

    # -- events ----------------------------------------------------------
    def _on_turn_started(self, data: dict[str, Any]) -> None:
        self._shown_diffs.clear()
        self._rejected.clear()
        self._in_turn = True
        if self.chatter:
            self.view.busy("thinking")

    def _on_intent(self, data: dict[str, Any]) -> None:
        route, label = str(data.get("route", "")), data.get("label")
        text = f"intent: {field(route)}" + (f" ({field(str(label))})" if label else "")
        self.chat(text, INTENT_COLORS.get(route, "bold"))

    def _on_plan(self, data: dict[str, Any]) -> None:
        steps = data.get("steps") or []
        self.chat(f"plan ({len(steps)} steps):", "bold")
        for step in steps:
            mark = "x" if step.get("done") else " "
            number, text = field(str(step.get("index", "?"))), field(str(step.get("text", "")))
            self.chat(f"  [{mark}] {number}. {text}", "dim")

    def _on_context_compacted(self, data: dict[str, Any]) -> None:
        if data.get("reason") == "manual":  # automatic ones also come as a notice
            before = field(str(data.get("messages_before", "?")))
            after = field(str(data.get("messages_after", "?")))
            self.chat(f"conversation compacted: {before} messages -> {after}", "dim")

    def _on_text_delta(self, data: dict[str, Any]) -> None:
        if self.options.output_format == "text":
            self.view.reply_delta(str(data.get("text", "")))

    def _on_reasoning_delta(self, data: dict[str, Any]) -> None:
        if self.chatter:
            self.view.reasoning_delta(str(data.get("text", "")))

    def _on_model_waiting(self, data: dict[str, Any]) -> None:
        seconds = data.get("seconds")
        if self.chatter and isinstance(seconds, int | float):
            self.view.waiting(float(seconds), data.get("done") is True)

    def _on_tool_call(self, data: dict[str, Any]) -> None:
        from coding_harness.client.render.tool_line import tool_line  # only once a tool is called

        name = str(data.get("name", "?"))
        self._calls[str(data.get("id"))] = name
        said = self.view.interim_text().strip()
        if said:  # what the model said before calling: stderr, so stdout stays the reply
            self.chat(said)
        self.chat(tool_line(name, str(data.get("arguments", ""))), "dim")
        if self.chatter:
            self.view.busy(f"running {field(name)}")

    def _on_tool_result(self, data: dict[str, Any]) -> None:
        """Under the call: a refusal, an edit not written, an output folded (tool_results)."""
        from coding_harness.client.render.tool_results import read_result

        name = self._calls.pop(str(data.get("id")), None) or str(data.get("name", "?"))
        said, flag = str(data.get("result") or ""), data.get("failed")  # None: an old daemon
        outcome = read_result(name, said, self.options.more, flag)
        if outcome.kind == "declined" and outcome.path:
            self._rejected.append(outcome.path)
        if outcome.kind == "ran" and outcome.lines:
            self.last_output = outcome.whole
        for text, style in outcome.whole if self.options.verbose else outcome.lines:
            self.chat(text, style)
        if self.chatter:
            self.view.busy("thinking")

    def _on_diff(self, data: dict[str, Any]) -> None:
        if self.chatter:
            self._show_diff(data)

    def _on_approval_requested(self, data: dict[str, Any]) -> None:
        self.view.pause()
        self._show_diff(data)
        summary = data.get("summary") or f"change to {data.get('path')}"
        self.view.line(field(str(summary)), "bold")

    def _show_diff(self, data: dict[str, Any]) -> None:
        path, diff = str(data.get("path", "")), str(data.get("diff", ""))
        if (path, diff) in self._shown_diffs:
            return
        self._shown_diffs.add((path, diff))
        self.view.diff(diff, path, bool(data.get("new_file")))

    def _on_approval_resolved(self, data: dict[str, Any]) -> None:
        """`approved` for an answer typed here; who answered, when it was someone else
        (shown under -q too: the question this client showed is gone)."""
        from coding_harness.client.render.approval_words import resolved_text

        mine = str(data.get("request")) in self.own_answers
        text = resolved_text(data, mine=mine)
        if mine:
            self.chat(text, "dim")
        else:
            self.notice(text, "dim")

    def _on_check_started(self, data: dict[str, Any]) -> None:
        """The check after an applied edit: by name, a spinner with its time at a terminal."""
        command = field(str(data.get("command") or "make check"))
        self._check = (command, self._at)
        if self.chatter:
            self.view.step(f"running {command}")

    def _on_check_result(self, data: dict[str, Any]) -> None:
        command, since = self._check or (field(str(data.get("command") or "make check")), None)
        self._check = None
        took = f"{self._at - since:.1f} s" if since is not None and self._at is not None else ""
        if data.get("passed"):
            self.chat(f"{command} passed" + (f" ({took})" if took else ""), "green")
            return
        code = field(str(data.get("exit_code")))
        self.notice(f"{command} failed (exit {code}" + (f", {took})" if took else ")"), "red")
        tail = str(data.get("output") or "").rstrip().split("\n")[-CHECK_OUTPUT_LINES:]
        for line in tail:
            self.chat(f"  {line}", "dim")

    def _on_undo(self, data: dict[str, Any]) -> None:
        restored = ", ".join(field(str(p)) for p in data.get("restored") or []) or "nothing"
        self.notice(f"undo of turn {field(str(data.get('turn')))}: put back {restored}", "yellow")
        for skipped in data.get("skipped") or []:
            path, reason = field(str(skipped.get("path"))), field(str(skipped.get("reason")))
            self.chat(f"  not put back: {path}: {reason}", "dim")

    def _on_hook(self, data: dict[str, Any]) -> None:
        """`hook PreToolUse: ./check.sh -> blocked`, dim; -q leaves it out (a refused
        prompt or a failed hook also comes as an error or a notice)."""
        command = (str(data.get("command") or "").strip().splitlines() or [""])[0]
        if len(command) > HOOK_COMMAND_SHOWN:
            command = command[: HOOK_COMMAND_SHOWN - 3] + "..."
        code = data.get("exit_code")
        if data.get("blocked"):
            outcome = "blocked"
        else:
            outcome = "ok" if code == 0 else "killed" if code is None else f"exit {code}"
        self.chat(f"hook {field(str(data.get('event')))}: {field(command)} -> {outcome}", "dim")

    def _on_mcp_state(self, data: dict[str, Any]) -> None:
        """One line per change; a start is only the spinner's label (at a terminal), and a
        failure is always shown, once for retries that fail alike."""
        from coding_harness.client.render.mcp_servers import state_line

        text, style = state_line(data)
        state, name = data.get("state"), str(data.get("name"))
        if state == "starting":
            if self.chatter:
                self._mcp_busy[name] = text.replace("mcp: ", "MCP server ", 1)
                self.view.busy(self._mcp_busy[name])
            return
        label = self._mcp_busy.pop(name, None)
        if label is not None:  # the start ended: so does its spinner
            self.view.end_busy(label, "thinking" if self._in_turn else None)
        said_before = self._mcp_states.get(name) == text
        self._mcp_states[name] = text
        if state != "failed":
            self.chat(text, style)
        elif not said_before:
            self.notice(text, style)

    def _on_index_state(self, data: dict[str, Any]) -> None:
        """A long build's first line and its last (ready or failed); a failure once per
        root and error. Progress in between, and a quick refresh, show nothing."""
        from coding_harness.client.render.index_lines import event_line

        root, state = str(data.get("root")), data.get("state")
        text, style = event_line(data)
        if state == "building":
            if root not in self._indexing and _long_build(data):
                self._indexing.add(root)
                self.chat(text, style)
            return
        announced = root in self._indexing
        self._indexing.discard(root)
        if state == "ready":
            self._index_errors.pop(root, None)
            if announced:
                self.chat(text, style)
        elif state == "failed" and self._index_errors.get(root) != text:
            self._index_errors[root] = text
            self.chat(text, style)

    def _on_turn_queued(self, data: dict[str, Any]) -> None:
        position = field(str(data.get("position")))
        self.notice(f"queued behind the running turn (position {position})")

    def _on_notice(self, data: dict[str, Any]) -> None:
        if data.get("kind") == "not_verified":  # an applied edit nobody checked: even with -q
            self.notice(str(data.get("message", "")), "yellow")
            return
        self.chat(str(data.get("message", "")), "yellow")

    def _on_error(self, data: dict[str, Any]) -> None:
        message = str(data.get("message", ""))
        self._errors_shown.add(message.strip())
        self.notice(f"error: {message}", "red")


def _long_build(data: dict[str, Any]) -> bool:
    total, seconds = data.get("total"), data.get("seconds")
    return (isinstance(total, int) and total >= INDEX_ANNOUNCE_FILES) or (
        isinstance(seconds, int | float) and seconds >= INDEX_ANNOUNCE_SECONDS
    )
