"""The terminal view: live preview and spinner, Markdown answers, colored diffs.

While the model works, a transient status area shows a spinner with the
elapsed time and the tail of the text streaming in (reasoning dimmed); while
it has not started answering, the spinner says "waiting for the model (N s)",
counting from the daemon's `model.waiting` events. When
a stretch of answer ends (a tool call, the end of the turn) the area is
cleared and that text is printed once, rendered as Markdown; reasoning is
printed dimmed on standard error, apart from the answer. Where the status
area lives is a `StatusArea`: a rich `Live` for the one-shot command
(`LiveStatusArea`), the prompt's toolbar in the REPL.

Untrusted text is made `visible` before it becomes a rich `Text` or
`Markdown`; markup in it is never interpreted and links are shown, not
hidden behind their labels. Everything printed is rendered through
`VisibleSegments` too, so what Markdown decodes (`&#x202e;`) is escaped as well.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol, TextIO

from rich.console import Console, RenderableType
from rich.live import Live
from rich.markdown import Markdown
from rich.text import Text

from coding_harness.client.render.diff_lines import numbered_lines
from coding_harness.client.render.rich_safe import VisibleSegments
from coding_harness.client.render.sanitize import field, visible

WAITING = "waiting for the model"
FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
ASCII_FRAMES = "-\\|/"
PREVIEW_LINES = 8
RICH_STYLES = {"dim": "dim", "bold": "bold", "cyan": "cyan", "green": "green"}
RICH_STYLES |= {"red": "red", "yellow": "yellow"}


class StatusArea(Protocol):
    def show(self) -> None: ...

    def hide(self) -> None: ...


def console_for(
    stream: TextIO, *, color: bool, width: int | None = None, terminal: bool | None = None
) -> Console:
    """A Console that never interprets markup, emoji codes or highlighting."""
    return Console(
        file=stream,
        force_terminal=terminal,
        no_color=not color,
        markup=False,
        emoji=False,
        highlight=False,
        width=width,
    )


class RichView:
    def __init__(
        self,
        out: Console,
        err: Console,
        area: StatusArea | None = None,
        *,
        preview_lines: int = PREVIEW_LINES,
    ) -> None:
        self.out, self.err = out, err
        self.area = area
        self.preview_lines = preview_lines
        self._lock = threading.Lock()
        self._answer: list[str] = []
        self._reasoning: list[str] = []
        self._label: str | None = None
        self._since = 0.0
        self._before_wait: str | None = None  # the label a wait for the model replaced
        self._streamed = False
        utf8 = (out.encoding or "").lower().startswith("utf")
        self._frames = FRAMES if utf8 else ASCII_FRAMES

    # -- the View protocol ------------------------------------------------
    def busy(self, label: str) -> None:
        with self._lock:
            self._before_wait = None
            if label != self._label:
                self._label, self._since = label, time.monotonic()
        self._show_area()

    def step(self, label: str) -> None:
        self.busy(label)

    def end_busy(self, label: str, then: str | None) -> None:
        with self._lock:
            if self._before_wait == label:  # under a wait for the model: what comes after it
                self._before_wait = then
            if self._label != label:
                return
            self._label, self._since = then, time.monotonic()
        if self.active():
            self._show_area()
        else:
            self._hide_area()

    def waiting(self, seconds: float, done: bool) -> None:
        """The spinner counts the wait for the model; when it ends, it says what it said."""
        with self._lock:
            if done:
                if self._before_wait is not None and self._label == WAITING:
                    self._label, self._since = self._before_wait, time.monotonic()
                self._before_wait = None
            else:
                if self._label != WAITING:
                    self._before_wait = self._label or "thinking"
                self._label, self._since = WAITING, time.monotonic() - seconds
        self._show_area()

    def reply_delta(self, text: str) -> None:
        if not text:
            return
        self._flush_reasoning()
        with self._lock:
            self._label = None
            self._answer.append(text)
            self._streamed = True
        self._show_area()

    def interim_text(self) -> str:
        return ""  # the answer streams as it comes, tool calls or not

    def reasoning_delta(self, text: str) -> None:
        if not text:
            return
        self._flush_answer()
        with self._lock:
            self._reasoning.append(text)
        self._show_area()

    def line(self, text: str, style: str = "") -> None:
        self._settle()
        self._print(self.err, Text(visible(text), style=RICH_STYLES.get(style, "")))
        self._show_area()

    def diff(self, diff: str, path: str, new_file: bool) -> None:
        self._settle()
        lines = [(f"(new file: {field(path)})", "cyan")] if new_file else []
        lines.extend(numbered_lines(diff, path))
        text = Text()
        for line, style in lines:
            text.append(visible(line), style=RICH_STYLES.get(style, ""))
            text.append("\n")
        text.rstrip()
        self._print(self.err, text)
        self._show_area()

    def pause(self) -> None:
        self._settle()
        with self._lock:
            self._label = None
        self._hide_area()

    def turn_done(self, reply: str, exit_code: int) -> None:
        streamed = self._streamed
        self.pause()
        if not streamed and exit_code == 0 and reply.strip():
            self._print(self.out, markdown(reply))
        self._streamed = False

    # -- the status area ----------------------------------------------------
    def status_lines(self, width: int = 0) -> list[tuple[str, str]]:
        """(style, text) lines for the status area: the preview tail, then the spinner."""
        with self._lock:
            answer, reasoning = "".join(self._answer), "".join(self._reasoning)
            label, since = self._label, self._since
        source, style = (answer, "") if answer else (reasoning, "dim")
        tail = visible(source).rstrip("\n").split("\n")[-self.preview_lines :] if source else []
        lines = [(style, _crop(line, width)) for line in tail]
        if label is not None:
            frame = self._frames[int(time.monotonic() * 10) % len(self._frames)]
            elapsed = time.monotonic() - since
            status = f"{label} ({elapsed:.0f} s)" if label == WAITING else f"{label} {elapsed:.1f}s"
            lines.append(("cyan", f"{frame} {field(status)}"))
        return lines

    def status_renderable(self) -> RenderableType:
        text = Text()
        for style, line in self.status_lines(self.out.width):
            text.append(line + "\n", style=style)
        text.rstrip()
        return VisibleSegments(text)

    def active(self) -> bool:
        with self._lock:
            return bool(self._label is not None or self._answer or self._reasoning)

    # -- internals ------------------------------------------------------------
    def _settle(self) -> None:
        self._flush_reasoning()
        self._flush_answer()

    def _flush_answer(self) -> None:
        with self._lock:
            text, self._answer = "".join(self._answer), []
        if text.strip():
            self._print(self.out, markdown(text))

    def _flush_reasoning(self) -> None:
        with self._lock:
            text, self._reasoning = "".join(self._reasoning), []
        if text.strip():
            self._print(self.err, Text(visible(text.strip("\n")), style="dim italic"))

    def _print(self, console: Console, renderable: RenderableType) -> None:
        self._hide_area()
        console.print(VisibleSegments(renderable))

    def _show_area(self) -> None:
        if self.area is not None and self.active():
            self.area.show()

    def _hide_area(self) -> None:
        if self.area is not None:
            self.area.hide()


def markdown(text: str) -> Markdown:
    return Markdown(visible(text), hyperlinks=False)


def _crop(line: str, width: int) -> str:
    if width <= 1 or len(line) < width:
        return line
    return line[: width - 2] + "…"


class LiveStatusArea:
    """The status area as a transient rich `Live` (the one-shot command at a terminal)."""

    def __init__(self, console: Console, render: Callable[[], RenderableType]) -> None:
        self.console = console
        self.render = render
        self._live: Live | None = None

    def show(self) -> None:
        if self._live is not None:
            return
        live = Live(
            console=self.console,
            get_renderable=self.render,
            transient=True,
            refresh_per_second=10,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        live.start()
        self._live = live

    def hide(self) -> None:
        live, self._live = self._live, None
        if live is not None:
            live.stop()
