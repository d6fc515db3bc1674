"""The lean view: plain text, ANSI colors on standard error when wanted.

Used off a terminal, under --plain/--no-color and for the JSON formats, so
the one-shot path never imports rich. With `stream_reply` the reply is written
as it arrives (the REPL); without, it is written once when the turn ends,
exactly as the model wrote it apart from neutralised control characters, so
scripts can read it. Reasoning goes to standard error, dimmed, apart from the
reply. A long wait for the model gets a line on standard error now and then
("waiting for the model (30 s)"): after WAIT_FIRST seconds, then every
WAIT_EVERY.
"""

from __future__ import annotations

from coding_harness.client.render.sanitize import field, visible
from coding_harness.client.render.style import Style

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

WAIT_FIRST = 10.0
WAIT_EVERY = 30.0


def waiting_text(seconds: float) -> str:
    return f"waiting for the model ({seconds:.0f} s)"


class PlainView:
    def __init__(self, style: Style, out: TextIO, *, stream_reply: bool) -> None:
        self.style = style
        self.out = out
        self.stream_reply = stream_reply
        self._out_mid_line = False
        self._err_mid_line = False
        self._streamed = False
        self._next_wait_line = WAIT_FIRST
        self._last_wait = 0.0
        self._interim: list[str] = []

    def busy(self, label: str) -> None:
        """No spinner here: nothing to animate off a terminal."""

    def step(self, label: str) -> None:
        self.line(f"{label} ...", "dim")

    def end_busy(self, label: str, then: str | None) -> None:
        """No spinner, nothing to end."""

    def waiting(self, seconds: float, done: bool) -> None:
        """A line at WAIT_FIRST seconds, then every WAIT_EVERY; a new wait starts over."""
        if done or seconds < self._last_wait:
            self._next_wait_line = WAIT_FIRST
        self._last_wait = 0.0 if done else seconds
        if done or seconds < self._next_wait_line:
            return
        self.line(waiting_text(seconds), "dim")
        self._next_wait_line = (seconds // WAIT_EVERY + 1) * WAIT_EVERY

    def reply_delta(self, text: str) -> None:
        if not self.stream_reply:
            self._interim.append(text)  # shown before a tool call, or dropped for the reply
            return
        if not text:
            return
        self._end_err_line()
        self.out.write(visible(text))
        self.out.flush()
        self._out_mid_line = not text.endswith("\n")
        self._streamed = True

    def interim_text(self) -> str:
        text, self._interim = "".join(self._interim), []
        return text

    def reasoning_delta(self, text: str) -> None:
        if not text:
            return
        self._end_out_line()
        self.style.stream.write(self.style.paint(text, "dim"))
        self.style.stream.flush()
        self._err_mid_line = not text.endswith("\n")

    def line(self, text: str, style: str = "") -> None:
        self.pause()
        self.style.line(text, style)

    def diff(self, diff: str, path: str, new_file: bool) -> None:
        self.pause()
        if new_file:
            self.style.line(f"(new file: {field(path)})", "cyan")
        self.style.diff(diff, path)

    def pause(self) -> None:
        self._end_out_line()
        self._end_err_line()

    def turn_done(self, reply: str, exit_code: int) -> None:
        self._interim.clear()  # the reply comes whole from the turn's end
        self._end_err_line()
        show_whole = not self.stream_reply or (not self._streamed and exit_code == 0)
        if show_whole and reply:
            self.out.write(visible(reply) + ("" if reply.endswith("\n") else "\n"))
        else:
            self._end_out_line()
        self.out.flush()
        self._streamed = False

    def _end_out_line(self) -> None:
        if self._out_mid_line:
            self.out.write("\n")
            self.out.flush()
            self._out_mid_line = False

    def _end_err_line(self) -> None:
        if self._err_mid_line:
            self.style.stream.write("\n")
            self.style.stream.flush()
            self._err_mid_line = False
