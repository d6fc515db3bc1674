"""The interactive REPL: submit lines, print the stream, answer approvals.

Built on prompt_toolkit (history in ~/.coding_agent_history). Ctrl-C during a
turn cancels that turn and stays in the REPL; Ctrl-D leaves, detaching
without stopping anything that runs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.history import FileHistory
from prompt_toolkit.input import Input
from prompt_toolkit.output import Output

from coding_harness.protocol import methods
from coding_harness.protocol.client import Connection, DaemonUnreachable
from coding_harness.protocol.version import __version__

from . import approval_prompt, exit_codes
from .args import OneShotOptions
from .attach import print_history
from .printer import PrintOptions, TurnPrinter
from .session_setup import key_env, open_session, reach_daemon
from .slash_commands import QUIT, SlashCommands
from .style import Style, color_wanted
from .turn_driver import TurnDriver

HISTORY_FILE = Path("~/.coding_agent_history")


def run_repl(
    options: OneShotOptions, *, pt_input: Input | None = None, pt_output: Output | None = None
) -> int:
    style = Style(sys.stderr, color=color_wanted(sys.stderr, options.plain))
    conn = reach_daemon(style)
    if conn is None:
        return exit_codes.DAEMON_UNREACHABLE
    with conn:
        try:
            prompt: PromptSession[str] = PromptSession(
                history=FileHistory(os.fspath(HISTORY_FILE.expanduser())),
                input=pt_input,
                output=pt_output,
            )
            return _Repl(conn, options, style, prompt).loop()
        except DaemonUnreachable as exc:
            style.line(f"harness: {exc}", "red")
            return exit_codes.DAEMON_UNREACHABLE


class _Repl:
    def __init__(
        self, conn: Connection, options: OneShotOptions, style: Style, prompt: PromptSession[str]
    ) -> None:
        self.conn = conn
        self.options = options
        self.style = style
        self.prompt = prompt
        # Approval answers are not tasks: they stay out of the history file.
        self.answers: PromptSession[str] = PromptSession(input=prompt.input, output=prompt.output)
        info = conn.initialize("harness-repl", __version__)
        quiet = OneShotOptions(**{**vars(options), "quiet": True})
        self.session = open_session(conn, quiet, info, style)
        printer = TurnPrinter(
            style, PrintOptions(quiet=options.quiet, stream_reply=True), sys.stdout
        )
        self.commands = SlashCommands(conn, self.session["session"], style)
        self.driver = TurnDriver(conn, self.session["session"], printer, self._answer)

    def loop(self) -> int:
        if not self.options.quiet:
            self._banner()
        while True:
            try:
                line = self.prompt.prompt("> ").strip()
            except KeyboardInterrupt:
                continue
            except EOFError:
                return exit_codes.OK
            if not line:
                continue
            if line.startswith("/"):
                if self.commands.handle(line) == QUIT:
                    return exit_codes.OK
                continue
            self._submit(line)

    def _banner(self) -> None:
        self.style.line(
            "coding-harness REPL. /help for commands, /quit or Ctrl-D to leave.", "bold"
        )
        where = [self.session.get("provider"), self.session.get("model"), self.session["cwd"]]
        self.style.line(" · ".join(str(part) for part in where if part), "dim")
        if self.options.session:
            self.style.line(f"attached to session {self.session['session']}", "dim")
            history = self.conn.request(
                methods.SESSION_HISTORY, {"session": self.session["session"]}
            )
            print_history(history["messages"], self.style)

    def _submit(self, text: str) -> None:
        submitted = self.conn.request(
            methods.SESSION_SUBMIT,
            {
                "session": self.session["session"],
                "text": text,
                "env": key_env(self.session.get("key_env") or []),
            },
        )
        try:
            finished = self.driver.follow(submitted["turn"])
        except KeyboardInterrupt:
            return
        self.driver.printer.final(finished)
        code = finished.get("exit_code")
        if code not in (0, None):
            self.style.line(f"(turn ended with exit code {code})", "dim")

    def _answer(self, request: dict[str, Any]) -> tuple[str, str] | None:
        def read_line() -> str:
            try:
                return self.answers.prompt("") + "\n"
            except EOFError:
                return ""

        return approval_prompt.ask(self.style, read_line=read_line)
