"""How a turn's events look in a terminal or a pipe.

The reply goes to standard output; everything else (tool lines, diffs,
checks, notices, errors) goes to standard error, so `harness -p ... > out`
captures the answer alone. At a terminal the reply streams as it arrives;
off a terminal it is printed once, at the end, exactly as the model wrote it.
"""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from .sanitize import visible
from .style import Style

TOOL_ARGS_PREVIEW = 100


class PrintOptions:
    def __init__(
        self, *, quiet: bool = False, stream_reply: bool = True, output_format: str = "text"
    ) -> None:
        self.quiet = quiet
        self.stream_reply = stream_reply
        self.output_format = output_format


class TurnPrinter:
    def __init__(self, style: Style, options: PrintOptions, out: TextIO | None = None) -> None:
        self.style = style
        self.options = options
        self.out = out or sys.stdout
        self._mid_line = False

    def event(self, kind: str, data: dict[str, Any], raw: dict[str, Any]) -> None:
        if self.options.output_format == "stream-json":
            self.out.write(json.dumps(raw.get("params", raw), ensure_ascii=False) + "\n")
            self.out.flush()
            return
        handler = getattr(self, "_on_" + kind.replace(".", "_"), None)
        if handler is not None:
            handler(data)

    def final(self, result: dict[str, Any]) -> None:
        fmt = self.options.output_format
        if fmt in ("json", "stream-json"):
            self.out.write(json.dumps(result, ensure_ascii=False) + "\n")
        elif not self.options.stream_reply:
            reply = str(result.get("reply", ""))
            self.out.write(visible(reply) + ("" if reply.endswith("\n") else "\n"))
        else:
            self._end_line()
        self.out.flush()

    def notice(self, text: str, style: str = "yellow") -> None:
        self._end_line()
        self.style.line(text, style)

    # -- events ----------------------------------------------------------
    def _on_text_delta(self, data: dict[str, Any]) -> None:
        if self.options.output_format != "text" or not self.options.stream_reply:
            return
        text = visible(str(data.get("text", "")))
        self.out.write(text)
        self.out.flush()
        self._mid_line = not text.endswith("\n")

    def _on_tool_call(self, data: dict[str, Any]) -> None:
        if self.options.quiet:
            return
        args = str(data.get("arguments", ""))
        if len(args) > TOOL_ARGS_PREVIEW:
            args = args[: TOOL_ARGS_PREVIEW - 3] + "..."
        self.notice(f"* {data.get('name', '?')} {args}", "dim")

    def _on_diff(self, data: dict[str, Any]) -> None:
        self._end_line()
        if data.get("new_file"):
            self.style.line(f"(new file: {data.get('path')})", "cyan")
        self.style.diff(str(data.get("diff", "")))

    def _on_check_result(self, data: dict[str, Any]) -> None:
        if data.get("passed"):
            self.notice("make check passed", "green")
        else:
            self.notice(f"make check failed (exit {data.get('exit_code')})", "red")

    def _on_approval_resolved(self, data: dict[str, Any]) -> None:
        if not self.options.quiet:
            self.notice(f"[{data.get('decision')} from {data.get('client')}]", "dim")

    def _on_turn_queued(self, data: dict[str, Any]) -> None:
        self.notice(f"queued behind the running turn (position {data.get('position')})")

    def _on_notice(self, data: dict[str, Any]) -> None:
        self.notice(str(data.get("message", "")))

    def _on_error(self, data: dict[str, Any]) -> None:
        self.notice(f"error: {data.get('message', '')}", "red")

    def _end_line(self) -> None:
        if self._mid_line:
            self.out.write("\n")
            self.out.flush()
            self._mid_line = False
