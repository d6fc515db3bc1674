"""The interactive REPL: type tasks, watch turns stream, answer approvals.

The prompt stays open while a turn runs: output is printed above it
(prompt_toolkit's `patch_stdout`), a line typed meanwhile is submitted and
queued by the daemon, and an approval request turns the prompt into its
question. Events are read on a connection of their own (`feed.EventFeed`,
which attaches again with `since_seq` when that connection drops, so no event
is lost); the prompt's thread sends requests on another, which reconnects on
its own when the daemon restarted or crashed (`LastingConnection`, starting a
daemon when none answers), so a line typed then is sent once it is back. Ctrl-C cancels the
running turn (`TurnDriver.cancel`) and stays; Ctrl-D or /quit leaves,
detaching without stopping anything. The slash commands that start a turn
(`/summary`, `/intent`, `/<skill>`) submit it here like a typed task, so it
streams, asks and cancels the same way. The prompt shows the session's permission
mode and, after a read-only turn, offers to carry its plan out (`modes.py`).
History lives in ~/.coding_agent_history.
A session on a profile the daemon discovered (no config file) is offered once to
be saved as ~/.coding_harness.json (`first_run`); the banner is `banner.py`'s.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO, cast

from prompt_toolkit.formatted_text import AnyFormattedText
from prompt_toolkit.input import Input
from prompt_toolkit.output import Output
from prompt_toolkit.patch_stdout import patch_stdout

from coding_harness.client.args import OneShotOptions
from coding_harness.client.render.approval_words import exit_words
from coding_harness.client.render.plain_view import PlainView
from coding_harness.client.render.printer import PrintOptions, TurnPrinter
from coding_harness.client.render.sanitize import VisibleWriter, one_line
from coding_harness.client.render.style import Style, color_wanted, is_terminal
from coding_harness.client.render.view_protocol import View
from coding_harness.client.render.views import rich_view
from coding_harness.client.repl import background_line, modes
from coding_harness.client.repl.banner import KEYS, print_banner
from coding_harness.client.repl.completer import DaemonValues, SlashCompleter
from coding_harness.client.repl.events import ReplState
from coding_harness.client.repl.feed import EventFeed
from coding_harness.client.repl.first_run import offer_to_save, terminal_asker
from coding_harness.client.repl.mentions import attach_mentions
from coding_harness.client.repl.prompt import ANSWER, PLAN, REASON, TASK, ReplPrompt, StatusToolbar
from coding_harness.client.repl.replay import replay
from coding_harness.client.repl.slash_commands import QUIT, SlashCommands
from coding_harness.client.repl.slash_settings import turn_cost
from coding_harness.client.session.approval_prompt import answers, hint, question
from coding_harness.client.session.lasting import LastingConnection, MaybeLost
from coding_harness.client.session.setup import key_env, open_session, reach_daemon
from coding_harness.client.session.turn_driver import TurnDriver
from coding_harness.protocol import errors, exit_codes, methods
from coding_harness.protocol.client import Connection, DaemonUnreachable
from coding_harness.protocol.events import Event
from coding_harness.protocol.methods import EventKind
from coding_harness.protocol.version import __version__

HISTORY_FILE = Path("~/.coding_agent_history")
REASON_QUESTION = "Reason for the model (one line): "
ECHO_WIDTH = 200


def run_repl(
    options: OneShotOptions,
    *,
    pt_input: Input | None = None,
    pt_output: Output | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """The REPL; tests pass prompt_toolkit's pipe input and output and their own streams."""
    with _streams(pt_output, out, err) as (out_stream, err_stream):
        style = Style(err_stream, color=color_wanted(err_stream, options.plain))
        conn = reach_daemon(style)
        if conn is None:
            return exit_codes.DAEMON_UNREACHABLE
        try:
            while True:  # `/resume ID` opens that session in place of this one
                with conn:
                    repl = _Repl(conn, options, style, out_stream, (pt_input, pt_output))
                    code = repl.run()
                resume = repl.commands.resume_to
                conn = reach_daemon(style) if resume else None
                if conn is None:
                    return exit_codes.DAEMON_UNREACHABLE if resume else code
                options = OneShotOptions(**{**vars(options), "session": resume})
        except DaemonUnreachable as exc:
            style.line(f"harness: {exc}", "red")
            return exit_codes.DAEMON_UNREACHABLE


@contextlib.contextmanager
def _streams(
    pt_output: Output | None, out: TextIO | None, err: TextIO | None
) -> Iterator[tuple[TextIO, TextIO]]:
    """At a terminal, print above the prompt; under test, to the given streams."""
    if pt_output is not None or out is not None or err is not None:
        yield out or sys.stdout, err or sys.stderr
        return
    with patch_stdout(raw=True):
        yield sys.stdout, sys.stderr


class _Repl:
    def __init__(
        self,
        events: Connection,
        options: OneShotOptions,
        style: Style,
        out: TextIO,
        terminal: tuple[Input | None, Output | None],
    ) -> None:
        self.options, self.style, self.out = options, style, out
        info = events.initialize("harness-repl", __version__, notices=True)
        quiet = OneShotOptions(**{**vars(options), "quiet": True})
        self.session = open_session(events, quiet, info, style)
        self.sid = str(self.session["session"])
        # Requests go on a connection that reconnects by itself (`lasting.py`).
        self.conn = LastingConnection(events.path, ("harness-repl", __version__))
        self.state = ReplState()
        self.modes = modes.ModeKeeper(modes.session_mode(self.session))
        if options.mode and options.mode != self.modes.mode:
            self.modes.mode = modes.switch_mode(self.conn, self.sid, options.mode)
        self.cwd = str(self.session.get("cwd", ""))
        self.commands = SlashCommands(
            self.conn, self.sid, style, run_turn=self._submit, cwd=self.cwd
        )
        values = DaemonValues(self.conn, self.sid, self.cwd)
        rich = terminal[1] is None and not options.plain and is_terminal(out)
        self.prompt = ReplPrompt(
            history_path=HISTORY_FILE.expanduser(),
            completer=SlashCompleter(self.commands.names, values),
            mode=self._mode,
            running=lambda: self.state.running is not None,
            cancel=self._cancel,
            cycle_mode=lambda: modes.cycle(self.conn, self.sid, self.modes, self.printer.notice),
            pt_input=terminal[0],
            pt_output=terminal[1],
            animated=rich,
            expand=lambda: self.printer.show_last_output(),
        )
        self.view = self._rich_view() if rich else PlainView(style, out, stream_reply=True)
        shown = PrintOptions(quiet=options.quiet, verbose=options.verbose, more="Ctrl-O")
        self.printer = TurnPrinter(self.view, shown, out)
        self.driver = TurnDriver(self.conn, self.sid, self.printer, lambda _: None)
        self.feed = EventFeed(
            events,
            self.sid,
            last_seq=int(self.session.get("last_seq") or 0),
            show=self._on_event,
            notice=self.printer.notice,
            give_up=self._give_up,
        )
        self._carry = ""
        self._lost: str | None = None
        self._terminal = terminal

    def _rich_view(self) -> View:
        view = rich_view(self.out, self.style)
        view.area = StatusToolbar(self.prompt, view.status_lines, view.active)
        return view

    # -- the loop ------------------------------------------------------------
    def run(self) -> int:
        if not self.options.quiet:
            print_banner(self.style, self.conn, self.session, bool(self.options.session))
        if self.options.session:  # its last turns, through the live renderer
            replay(self.conn, self.session, self._on_event, self.printer, self.style)
        offer_to_save(self.session, self.style, terminal_asker(*self._terminal))
        self.feed.start()
        try:
            return self._loop()
        finally:
            self.feed.stop()
            self.view.pause()
            self.conn.close()

    def _loop(self) -> int:
        while self._lost is None:
            try:
                line = self.prompt.read(self._message, default=self._carry)
            except KeyboardInterrupt:
                self._carry = ""
                continue
            except EOFError:
                break
            self._carry = ""
            try:
                if self._dispatch(self.prompt.accepted_mode, line) == QUIT:
                    break
            except KeyboardInterrupt:
                continue
        if self._lost is not None:
            self.style.line(f"harness: {self._lost}", "red")
            return exit_codes.DAEMON_UNREACHABLE
        return self._leave()

    def _dispatch(self, mode: str, line: str) -> str | None:
        if mode == ANSWER:
            self._answer(line)
        elif mode == REASON:
            self._reason(line)
        elif mode == PLAN and not line.strip().startswith("/"):
            self._plan(line)
        elif line.strip().startswith(("/", "!")):
            return self._slash(line.strip())
        elif background_line.wanted(line):  # `task &`: a session of its own, in the background
            background_line.fire(self.conn, self.session, line, self.style)
        elif line.strip():
            self._submit(attach_mentions(line.strip(), Path(self.cwd), self.style.line))
        return None

    def _leave(self) -> int:
        if self.state.running is not None:
            self.style.line(
                f"the running turn goes on in the daemon; `harness attach {self.sid}` follows it",
                "dim",
            )
        return exit_codes.OK

    def _message(self) -> AnyFormattedText:
        mode = self._mode()
        if mode == ANSWER:
            pending = self.state.pending()
            return [("bold", question(pending))]
        if mode == PLAN:
            return [("bold", modes.PLAN_QUESTION)]
        return REASON_QUESTION if mode == REASON else self.modes.tag() + "> "

    def _mode(self) -> str:
        if self.state.reason_for is not None:
            return REASON
        if self.state.pending() is not None:
            return ANSWER
        return PLAN if self.modes.offering else TASK

    # -- what a line does ------------------------------------------------------
    def _slash(self, line: str) -> str | None:
        # Whatever a command prints (a reply, a skill's description) is made visible.
        safe = cast(TextIO, VisibleWriter(self.out))
        with contextlib.redirect_stdout(safe):
            result = self.commands.handle(line)
            if line.split()[0] == "/help":
                print(KEYS)
        return result

    def _submit(self, text: str, options: dict[str, Any] | None = None) -> None:
        """Send a task (or a slash command's turn, with its `options`) and return at once:
        its events stream through the feed and its approvals are asked at the prompt."""
        self.state.submitted(text)
        params = {"session": self.sid, "text": text, "env": key_env(self._key_names())}
        if options:
            params["options"] = options
        try:
            self.conn.request(methods.SESSION_SUBMIT, params)
        except errors.RpcError as exc:
            self.printer.notice(exc.message, "red")
        except MaybeLost as exc:
            self.printer.notice(f"{exc}; if no turn starts, type the task again", "yellow")

    def _key_names(self) -> list[str]:
        return list(self.session.get("key_env") or [])

    def _answer(self, line: str) -> None:
        pending = self.state.pending()
        if pending is None:
            self.printer.notice("that request was already answered")
            return
        decision = answers(pending).get(line.strip().lower())
        if decision is None:
            self.printer.notice(hint(pending), "")
            if len(line.strip()) > 3:  # a task typed before the question came: keep it
                self._carry = line
        elif decision == "skip":
            self.state.await_reason(pending)
        else:
            self._respond(pending, decision, "")

    def _plan(self, line: str) -> None:
        """The answer to "accept the plan?": switch the mode and carry it out, or not."""
        action, value = self.modes.answer(line)
        if action == "hint":
            self.printer.notice(modes.PLAN_HINT, "")
        elif action == "task":
            self._submit(value)
        elif action == "switch":
            try:
                self.modes.mode = modes.switch_mode(self.conn, self.sid, value)
            except errors.RpcError as exc:
                self.printer.notice(exc.message, "red")
                return
            self._submit(modes.CARRY_OUT)

    def _reason(self, line: str) -> None:
        pending = self.state.reason_for
        if pending is not None:
            self._respond(pending, "skip", line.strip())

    def _respond(self, pending: dict[str, Any], decision: str, reason: str) -> None:
        self.state.resolved(pending.get("request"))
        self.driver.respond(pending, decision, reason)

    def _cancel(self) -> None:
        try:
            self.driver.cancel()
        except errors.RpcError as exc:
            self.printer.notice(exc.message, "red")
        except DaemonUnreachable as exc:
            self.printer.notice(str(exc), "red")

    # -- events (on the event thread) ------------------------------------------
    def _give_up(self, reason: str) -> None:
        """The events connection is gone for good: the prompt ends the REPL (exit 4)."""
        self._lost = reason
        self.prompt.interrupt()

    def _on_event(self, event: Event) -> None:
        kind, data = event.kind, event.data
        if kind == EventKind.TURN_STARTED:
            text = event.text("text")
            own = self.state.started(str(event.turn), text)
            self.modes.started(str(event.turn), own)
            if not own and text:
                # Typed elsewhere: another terminal, or `harness -p --session`.
                self.printer.chat("> " + one_line(text, ECHO_WIDTH), "dim")
        self.printer.event(kind, data, event.notification)
        if kind == EventKind.TURN_FINISHED:
            self.state.finished(str(event.turn))
            self.printer.final(data)
            self._report_exit(data.get("exit_code"))
            if data.get("cost_usd") is not None and not self.options.quiet:
                self.printer.notice(turn_cost(data), "dim")
            self.modes.finished(str(event.turn), data.get("exit_code"))
        elif kind == EventKind.MODE_CHANGED:
            self.printer.notice(self.modes.changed(data), "dim")
        elif kind == EventKind.APPROVAL_REQUESTED:
            self.state.requested(data)
        elif kind == EventKind.APPROVAL_RESOLVED:
            self.state.resolved(data.get("request"))
        self.prompt.wake()

    def _report_exit(self, code: object) -> None:
        if code not in (0, None):  # `edit rejected`, never the bare exit code
            self.printer.notice(f"({exit_words(code)})", "dim")
