"""The REPL's input line: prompt_toolkit with history, keys and a status toolbar.

- Enter submits; Esc-Enter, or Enter after a trailing backslash, starts a
  new line (the backslash is dropped), so a task can span lines.
- Ctrl-R searches the history (prompt_toolkit's own reverse search); the
  history file keeps tasks only, never approval answers or skip reasons.
- Ctrl-C while a turn runs calls `cancel` and keeps what was typed; with no
  turn running it clears the line, as usual. Esc alone does the same while a
  turn runs (Claude Code's key); Esc-Enter stays a new line. Ctrl-D on an empty
  line leaves.
- Shift-Tab calls `cycle_mode`: the session's next permission mode.
- Ctrl-O calls `expand` (the last command's output, whole, printed above).
- The bottom toolbar shows the status area (spinner, streaming preview) of
  the rich view while a turn runs, refreshed ten times a second.

The prompt runs on the main thread; the event thread only calls `wake`,
`interrupt` and `set_toolbar`, which are safe from any thread.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.application import Application, run_in_terminal
from prompt_toolkit.completion import Completer
from prompt_toolkit.enums import DEFAULT_BUFFER
from prompt_toolkit.filters import Condition, has_focus
from prompt_toolkit.formatted_text import AnyFormattedText, StyleAndTextTuples
from prompt_toolkit.history import FileHistory
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.output import Output
from prompt_toolkit.styles import Style as PromptStyle

# What the line being typed is: a task, an approval's answer, a skip's reason, or the
# answer to the plan offered after a read-only turn (`modes.py`).
TASK, ANSWER, REASON, PLAN = "task", "answer", "reason", "plan"
CONTINUATION = "… "
TOOLBAR_STYLE = PromptStyle.from_dict({"bottom-toolbar": "noreverse"})


HISTORY_LIMIT = 1000


def history_entries(text: str) -> list[str]:
    """Entries of a history file, oldest first. Two formats are read: the REPL's own
    (`# time` lines, then the entry's lines each after a `+`) and the reference
    designs' plain one (one entry per line), so an existing file keeps working."""
    entries: list[str] = []
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith("+"):
            lines.append(line[1:])
            continue
        if lines:
            entries.append("\n".join(lines))
            lines = []
        if line.strip() and not line.startswith("#"):
            entries.append(line)
    if lines:
        entries.append("\n".join(lines))
    return entries


class TaskHistory(FileHistory):
    """A FileHistory that keeps a line only when `keep()` says it is a task.

    A history file that cannot be read or written (permissions, a folder in its
    place) costs the recall of earlier sessions, never the REPL: lines are kept
    in memory for this one.
    """

    def __init__(self, path: Path, keep: Callable[[], bool]) -> None:
        super().__init__(os.fspath(path))
        self.keep = keep
        self.problem: str | None = None

    def append_string(self, string: str) -> None:
        if self.keep():
            super().append_string(string)

    def load_history_strings(self) -> Iterable[str]:
        """The newest HISTORY_LIMIT entries, newest first."""
        try:
            with open(self.filename, "rb") as handle:  # noqa: PTH123 (FileHistory's str path)
                data = handle.read()
        except FileNotFoundError:
            return []
        except OSError as exc:
            self.problem = f"cannot read {self.filename!s} ({exc.strerror or exc})"
            return []
        entries = history_entries(data.decode("utf-8", errors="replace"))
        return list(reversed(entries[-HISTORY_LIMIT:]))

    def store_string(self, string: str) -> None:
        if self.problem is not None:
            return
        try:
            super().store_string(string)
        except OSError as exc:
            self.problem = f"cannot write {self.filename!s} ({exc.strerror or exc})"


class ReplPrompt:
    def __init__(
        self,
        *,
        history_path: Path,
        completer: Completer,
        mode: Callable[[], str],
        running: Callable[[], bool],
        cancel: Callable[[], None],
        cycle_mode: Callable[[], None] | None = None,
        pt_input: Input | None = None,
        pt_output: Output | None = None,
        animated: bool = False,
        expand: Callable[[], None] | None = None,
    ) -> None:
        self.mode = mode
        self.expand = expand
        self.running = running
        self.cancel = cancel
        self.cycle_mode = cycle_mode
        self.accepted_mode = TASK
        history = TaskHistory(history_path, keep=lambda: self.accepted_mode == TASK)
        self.session: PromptSession[str] = PromptSession(
            history=history,
            completer=completer,
            complete_while_typing=False,
            key_bindings=self._bindings(),
            prompt_continuation=CONTINUATION,
            input=pt_input,
            output=pt_output,
            style=TOOLBAR_STYLE,
            refresh_interval=0.1 if animated else 0,
        )

    def read(self, message: Callable[[], AnyFormattedText], default: str = "") -> str:
        """One accepted line; `accepted_mode` then says what it answers."""
        self.accepted_mode = TASK
        return self.session.prompt(message, default=default)

    @property
    def app(self) -> Application[str]:
        return self.session.app

    def wake(self) -> None:
        """Redraw (the message may have changed)."""
        self.app.invalidate()

    def set_toolbar(self, toolbar: Callable[[], AnyFormattedText] | None) -> None:
        self.session.bottom_toolbar = toolbar
        self.app.invalidate()

    def interrupt(self) -> None:
        """End the prompt as if Ctrl-D was pressed (the daemon went away)."""
        app = self.app
        loop = app.loop
        if app.is_running and loop is not None:
            loop.call_soon_threadsafe(_exit_quietly, app)

    def _bindings(self) -> KeyBindings:
        bindings = KeyBindings()
        editing = has_focus(DEFAULT_BUFFER)

        @bindings.add("enter", filter=editing)
        def _enter(event: KeyPressEvent) -> None:
            buffer = event.current_buffer
            if self.mode() == TASK and buffer.text.endswith("\\"):
                buffer.text = buffer.text[:-1] + "\n"
                buffer.cursor_position = len(buffer.text)
                return
            self.accepted_mode = self.mode()
            buffer.validate_and_handle()

        @bindings.add("escape", "enter", filter=editing)
        def _newline(event: KeyPressEvent) -> None:
            event.current_buffer.insert_text("\n")

        @bindings.add("c-o", filter=Condition(lambda: self.expand is not None))
        def _expand(event: KeyPressEvent) -> None:
            if self.expand is not None:
                run_in_terminal(self.expand)

        @bindings.add("c-c", filter=Condition(self.running))
        @bindings.add("<sigint>", filter=Condition(self.running))
        @bindings.add("escape", filter=Condition(self.running) & editing)
        def _cancel(event: KeyPressEvent) -> None:
            self.cancel()

        @bindings.add("s-tab", filter=editing & Condition(lambda: self.mode() == TASK))
        def _next_mode(event: KeyPressEvent) -> None:
            if self.cycle_mode is not None:
                self.cycle_mode()

        return bindings


def _exit_quietly(app: Application[str]) -> None:
    if app.is_running and app.future is not None and not app.future.done():
        app.exit(exception=EOFError())


# How the rich view's style names look in the toolbar.
TOOLBAR_COLORS = {"dim": "fg:ansibrightblack", "cyan": "fg:ansicyan", "": ""}


class StatusToolbar:
    """The rich view's status area (spinner, preview), drawn as the bottom toolbar."""

    def __init__(
        self,
        prompt: ReplPrompt,
        lines: Callable[[int], list[tuple[str, str]]],
        active: Callable[[], bool],
    ) -> None:
        self.prompt = prompt
        self.lines = lines
        self.active = active
        self._shown = False

    def show(self) -> None:
        if not self._shown:
            self._shown = True
            self.prompt.set_toolbar(self._fragments)

    def hide(self) -> None:
        if self._shown and not self.active():
            self._shown = False
            self.prompt.set_toolbar(None)

    def _fragments(self) -> StyleAndTextTuples:
        width = self.prompt.app.output.get_size().columns
        fragments: StyleAndTextTuples = [
            (TOOLBAR_COLORS.get(style, ""), line + "\n") for style, line in self.lines(width)
        ]
        if fragments:
            style, last = fragments[-1][:2]
            fragments[-1] = (style, last.rstrip("\n"))
        return fragments
