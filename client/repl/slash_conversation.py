"""The slash commands on the conversation itself: `/history`, `/reset` (and `/clear`),
`/save`, `/load`, `/resume`, and `!CMD`, the user's own shell command (mixed into
`SlashCommands`).

`/reset` and `/load` print nothing of their own: the daemon's notice
(`conversation cleared`, `conversation replaced by N loaded messages`) reaches every
attached terminal, this one included. `/resume` lists the sessions (this folder's
first) and `/resume ID` leaves this session for that one (the REPL opens it in its
place). `!CMD` runs CMD with the user's own rights, through their shell, in the
session's folder, not the agent's: no whitelist, no sandbox, no approval. Its
output is shown and added to the conversation (`session.append`), so the next
task can refer to it.
"""

from __future__ import annotations

import os
import subprocess
from typing import Any

from coding_harness.client.commands.sessions_resume import NoSuchSession, print_choices, resolve
from coding_harness.client.render.history import print_history
from coding_harness.client.render.sanitize import one_line, visible
from coding_harness.client.render.style import Style
from coding_harness.client.repl.slash_files import load_messages, save_messages, shown, user_path
from coding_harness.protocol import methods
from coding_harness.protocol.client import Connection
from coding_harness.protocol.history_pages import read_history

# What `handle` returns to leave this session (for another one after `/resume ID`).
QUIT = "quit"
# The output of a `!CMD` kept for the model: its first and last parts, this many bytes.
SHELL_KEEP_BYTES = 32 * 1024


def shell_note(command: str, code: int, output: str) -> str:
    """What the conversation is told of a `!CMD` the user ran."""
    if len(output) > SHELL_KEEP_BYTES:
        half = SHELL_KEEP_BYTES // 2
        cut = len(output) - 2 * half
        output = f"{output[:half]}\n[... {cut:,} characters left out ...]\n{output[-half:]}"
    fence = "````" if "```" in output else "```"
    return (
        f"I ran `{command}` in my own shell (exit code {code}). Its output:\n"
        f"{fence}\n{output.rstrip()}\n{fence}"
    )


class ConversationCommands:
    """History, reset, save, load, resume and `!CMD` (mixed into `SlashCommands`)."""

    conn: Connection
    session: str
    cwd: str
    style: Style
    resume_to: str | None

    def _messages(self) -> list[dict[str, Any]]:
        """The whole history, read page by page (a page holds at most a few MiB)."""
        return read_history(self.conn, self.session)

    def _history(self, _: str) -> None:
        messages = self._messages()
        if not messages:
            self.style.line("(no messages yet)", "dim")
        print_history(messages, self.style, limit=len(messages) or 1)

    def _reset(self, _: str) -> None:
        self.conn.request(methods.SESSION_RESET, {"session": self.session})

    def _save(self, argument: str) -> None:
        if not argument:
            self.style.line("usage: /save FILE", "yellow")
            return
        path = user_path(argument)
        messages = self._messages()
        save_messages(path, messages)
        self.style.line(f"saved {len(messages)} messages to {shown(path)}", "dim")

    def _load(self, argument: str) -> None:
        if not argument:
            self.style.line("usage: /load FILE", "yellow")
            return
        messages = load_messages(user_path(argument))
        self.conn.request(methods.SESSION_RESET, {"session": self.session, "messages": messages})

    def _resume(self, argument: str) -> str | None:
        sessions = self.conn.request(methods.SESSION_LIST)["sessions"]
        if not argument:
            print_choices(sessions, self.cwd, current=self.session)
            self.style.line("/resume N (or an id, or its start) opens that session here", "dim")
            return None
        try:
            found = resolve(sessions, argument.split()[0], self.cwd)
        except NoSuchSession as exc:
            self.style.line(str(exc), "yellow")
            return None
        if found == self.session:
            self.style.line("that is this session", "dim")
            return None
        self.resume_to = found  # the REPL opens it once this one is left
        return QUIT

    def shell(self, command: str) -> None:
        """`!CMD`: run it as the user, show its output, and tell the conversation."""
        if not command:
            self.style.line(
                "usage: !COMMAND (runs in your shell, in the session's folder)", "yellow"
            )
            return
        shell = os.environ.get("SHELL") or "/bin/sh"
        try:
            done = subprocess.run(
                [shell, "-c", command],
                cwd=self.cwd or None,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                check=False,
            )
        except OSError as exc:
            self.style.line(f"!{one_line(command, 80)}: {exc.strerror or exc}", "red")
            return
        output = done.stdout.decode("utf-8", errors="replace")
        if output:
            print(visible(output.rstrip("\n")), flush=True)
        code = done.returncode
        self.conn.request(
            methods.SESSION_APPEND,
            {"session": self.session, "text": shell_note(command, code, output)},
        )
        said = "exit code 0" if code == 0 else f"exit code {code}"
        self.style.line(f"({said}; the output is in the conversation)", "dim")
