"""The REPL's slash commands, each one line in `/help`.

A command runs before any model call. Those that change the session go
through the daemon, so every attached terminal sees the result. `/summary`,
`/intent` and `/<skill>` start a turn with submit options: the REPL passes
a `run_turn` that submits it as a turn of its own session and returns (its
events stream above the prompt, its approvals are asked there); without one,
a plain follower on this connection prints the reply. A bad argument (a path
that cannot be used, an unknown value) is one line naming the problem.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from coding_harness.client.render.history import print_history
from coding_harness.client.render.sanitize import field, one_line, visible
from coding_harness.client.render.style import Style
from coding_harness.client.repl.allow_command import USAGE as ALLOW_USAGE
from coding_harness.client.repl.allow_command import AllowCommand
from coding_harness.client.repl.map_command import USAGE as MAP_USAGE
from coding_harness.client.repl.map_command import MapCommand
from coding_harness.client.repl.mcp_command import USAGE as MCP_USAGE
from coding_harness.client.repl.mcp_command import McpCommand
from coding_harness.client.repl.memory_command import MemoryCommand
from coding_harness.client.repl.modes import describe
from coding_harness.client.repl.slash_files import (
    BadFile,
    load_messages,
    save_messages,
    shown,
    user_path,
)
from coding_harness.client.repl.undo_command import USAGE as UNDO_USAGE
from coding_harness.client.repl.undo_command import UndoCommands
from coding_harness.protocol import errors, methods
from coding_harness.protocol.client import Connection
from coding_harness.protocol.events import parse_event
from coding_harness.protocol.history_pages import read_history
from coding_harness.protocol.methods import EventKind
from coding_harness.protocol.modes import PERMISSION_MODES
from coding_harness.protocol.vocabulary import ROUTES, SEARCH_ENGINES, SEARCH_OFF

QUIT = "quit"
BUDGET_DIGITS = 15  # a token budget beyond this is no budget (and int() refuses 4,300 digits)
# Submit a turn with these options and follow it: (text, options).
RunTurn = Callable[[str, dict[str, Any]], None]


class _AgentCommands:
    """Context, compaction, plans, skills and routes (mixed into `SlashCommands`)."""

    conn: Connection
    session: str
    style: Style
    run_turn: RunTurn

    def _context(self, _: str) -> None:
        from coding_harness.client.render.tables import render_context_table

        data = self.conn.request(methods.SESSION_CONTEXT, {"session": self.session})
        render_context_table(data)
        self.style.line(str(data.get("estimate", "")), "dim")

    def _compact(self, _: str) -> None:
        self.style.line("compacting: the model is summarising the conversation ...", "dim")
        try:
            done = self.conn.request(
                methods.SESSION_COMPACT, {"session": self.session}, timeout=None
            )
        except KeyboardInterrupt:
            self.style.line("the daemon carries on compacting; /context shows the result", "dim")
            return
        if not done.get("compacted"):
            self.style.line("nothing to compact yet", "dim")
            return
        self.style.line(
            f"compacted {done['messages_before']} messages into {done['messages_after']}: "
            f"about {done['tokens_before']:,} -> {done['tokens_after']:,} tokens (estimated)"
            + ("" if done.get("summarised") else "; the model gave no summary"),
            "dim",
        )
        self._context("")

    def _plan(self, _: str) -> None:
        plan = self.conn.request(methods.PLAN_GET, {"session": self.session}).get("plan")
        if not plan:
            self.style.line("no plan yet: the agent commits one for work with several steps", "dim")
            return
        colors = {"done": "green", "touched": "yellow", "pending": ""}
        for step in plan["steps"]:
            files = f"  ({', '.join(step['files'])})" if step["files"] else ""
            line = f"{step['index']:>2}. [{step['status']}] {step['text']}{files}"
            self.style.line(line, colors.get(step["status"], ""))
        self.style.line(
            f"{plan['done']} done, {plan['touched']} touched, {plan['pending']} pending "
            f"(from {plan['source']})",
            "dim",
        )

    def _skills(self, _: str) -> None:
        listing = self.conn.request(methods.SKILLS_LIST, {"session": self.session})
        found = listing["skills"]
        if not found:
            self.style.line("no skills: add one as ~/.agents/skills/NAME/SKILL.md", "dim")
        width = max((len(skill["name"]) for skill in found), default=0) + 1
        for skill in found:
            name, scope = field(str(skill["name"])), field(str(skill["scope"]))
            print(f"/{name:<{width}} {field(str(skill['description']))}  [{scope}]")
        self._say_hidden(listing.get("hidden") or [])

    def _say_hidden(self, hidden: list[dict[str, Any]], name: str | None = None) -> None:
        """One line per hidden skill folder (of `name` only, when given), with why."""
        for skill in hidden:
            if name is None or skill.get("name") == name:
                said = f"{skill.get('scope')} skill {field(str(skill.get('path')))} hidden"
                self.style.line(f"{said}: {field(str(skill.get('reason')))}", "yellow")

    def _skill(self, name: str, task: str) -> str | None:
        listing = self.conn.request(methods.SKILLS_LIST, {"session": self.session})
        self._say_hidden(listing.get("hidden") or [], name[1:])
        if name[1:] not in {skill["name"] for skill in listing["skills"]}:
            self.style.line(f"unknown command {name}; /help lists them", "yellow")
            return None
        self.run_turn(task or name, {"skill": name[1:]})
        return None

    def _summary(self, _: str) -> None:
        self.run_turn("/summary", {"mode": "summary"})

    def _intent(self, argument: str) -> None:
        route, _, text = argument.partition(" ")
        if route and route not in ROUTES:
            self.style.line(
                f"/intent: no route {one_line(route, 40)!r}; "
                f"usage: /intent {'|'.join(ROUTES)} TEXT",
                "yellow",
            )
            return
        if not text.strip():
            self.style.line(f"usage: /intent {'|'.join(ROUTES)} TEXT", "yellow")
            return
        self.run_turn(text.strip(), {"route": route})

    def _follow_plainly(self, text: str, options: dict[str, Any]) -> None:
        """Submit and print the reply; approvals are left to `harness approve`."""
        params = {"session": self.session, "text": text, "options": options}
        turn = self.conn.request(methods.SESSION_SUBMIT, params)["turn"]
        try:
            while True:
                event = parse_event(self.conn.next_notification(timeout=None))
                if event is None or event.session != self.session:
                    continue
                if event.kind == EventKind.APPROVAL_REQUESTED:
                    self.style.line(f"approval needed: harness approve {self.session}", "yellow")
                elif event.kind in (EventKind.NOTICE, EventKind.ERROR):
                    self.style.line(event.text("message"), "yellow")
                elif event.kind == EventKind.TURN_FINISHED and event.turn == turn:
                    print(visible(event.text("reply")))
                    return
        except KeyboardInterrupt:
            self.conn.request(methods.SESSION_CANCEL, {"session": self.session})


class SlashCommands(_AgentCommands):
    def __init__(
        self, conn: Connection, session: str, style: Style, run_turn: RunTurn | None = None
    ) -> None:
        self.conn = conn
        self.session = session
        self.style = style
        self.run_turn = run_turn or self._follow_plainly
        undo = UndoCommands(conn, session, style)
        self._commands: dict[str, tuple[str, Callable[[str], str | None]]] = {
            "/help": ("this list", self._help),
            "/history": ("the conversation so far", self._history),
            "/reset": ("start the conversation afresh (same session)", self._reset),
            "/save": ("/save FILE: write the conversation to a JSON file", self._save),
            "/load": ("/load FILE: replace the conversation with one saved by /save", self._load),
            "/quit": ("leave (the session stays in the daemon; Ctrl-D too)", lambda _: QUIT),
            "/provider": ("/provider [NAME]: show or switch the provider profile", self._provider),
            "/model": ("/model ID: use this model for the session", self._model),
            "/tokens": ("tokens and cost of this session, and today's totals", self._tokens),
            "/allow-cmd": (ALLOW_USAGE, AllowCommand(conn, session, style)),
            "/search": (
                f"/search [{'|'.join((*SEARCH_ENGINES, SEARCH_OFF))}]: web search for the agent",
                self._search,
            ),
            "/budget": ("/budget [N]: the session's token budget (0 removes it)", self._budget),
            "/debug": ("/debug [on|off]: raw model exchanges to a file, or where", self._debug),
            "/mode": (
                f"/mode [{'|'.join(PERMISSION_MODES)}]: what the agent may do unasked",
                self._mode,
            ),
            "/context": (
                "the model's context, message by message (tokens estimated)",
                self._context,
            ),
            "/compact": ("replace the conversation with a brief the model writes", self._compact),
            "/summary": ("the agent reads the source files and summarises them", self._summary),
            "/skills": ("the skills that /<name> [task] loads", self._skills),
            "/plan": ("the session's plan, each step checked against the files", self._plan),
            "/map": (MAP_USAGE, MapCommand(conn, session, style)),
            "/memory": (
                "/memory [rm N|clear|add TEXT|edit]: the project's notes from earlier turns",
                MemoryCommand(conn, session, style),
            ),
            "/intent": (
                f"/intent {'|'.join(ROUTES)} TEXT: send TEXT down that route",
                self._intent,
            ),
            "/undo": (UNDO_USAGE, undo.undo),
            "/checkpoints": ("the turns /undo can put back, and their files", undo.checkpoints),
            "/mcp": (MCP_USAGE, McpCommand(conn, session, style)),
        }

    def names(self) -> list[str]:
        return sorted(self._commands)

    def handle(self, line: str) -> str | None:
        """Run a slash command; QUIT to leave, None when done."""
        name, _, argument = line.partition(" ")
        name = "/quit" if name == "/exit" else name
        entry = self._commands.get(name)
        try:
            if entry is None:
                return self._skill(name, argument.strip())
            return entry[1](argument.strip())
        except errors.RpcError as exc:
            self.style.line(one_line(exc.message, 300), "red")
        except BadFile as exc:
            self.style.line(str(exc), "red")
        return None

    def _help(self, _: str) -> None:
        for name, (summary, _handler) in sorted(self._commands.items()):
            print(f"{name:<10} {summary}")
        print("/<skill> [task] runs a task with a skill (see /skills).")
        print("Anything else is a task for the agent. Ctrl-C cancels a running turn.")

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
        self.style.line("conversation cleared", "dim")

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
        path = user_path(argument)
        messages = load_messages(path)
        result = self.conn.request(
            methods.SESSION_RESET, {"session": self.session, "messages": messages}
        )
        self.style.line(f"loaded {result['messages']} messages from {shown(path)}", "dim")

    def _provider(self, argument: str) -> None:
        if argument:
            switched = self.conn.request(
                methods.PROVIDER_USE, {"session": self.session, "name": argument}
            )
            self.style.line(
                f"now using {switched.get('provider')} · {switched.get('model')}", "dim"
            )
            return
        listing = self.conn.request(methods.PROVIDER_LIST, {"session": self.session})
        for entry in listing["providers"]:
            mark = "*" if entry.get("name") == listing.get("active") else " "
            line = f"{mark} {entry.get('name'):<16} {entry.get('model')}  {entry.get('endpoint')}"
            print(visible(line))

    def _model(self, argument: str) -> None:
        if not argument or len(argument.split()) > 1:
            self.style.line("usage: /model ID (one word, as the model server names it)", "yellow")
            return
        switched = self.conn.request(
            methods.MODEL_USE, {"session": self.session, "model": argument}
        )
        self.style.line(f"now using {switched.get('provider')} · {switched.get('model')}", "dim")

    def _tokens(self, _: str) -> None:
        from coding_harness.client.render.tables import render_tokens_table

        render_tokens_table(self.conn.request(methods.STATS_GET, {"session": self.session}))

    def _configure(self, **change: Any) -> None:
        self.conn.request(methods.SESSION_CONFIGURE, {"session": self.session, **change})

    def _search(self, argument: str) -> None:
        self._configure(search=False if argument == SEARCH_OFF else (argument or "toggle"))

    def _budget(self, argument: str) -> None:
        if not argument:
            current = self.conn.request(methods.SESSION_CONFIGURE, {"session": self.session})
            budget = current["options"].get("token_budget")
            stats = self.conn.request(methods.STATS_GET, {"session": self.session})
            usage = stats.get("session", {}).get("usage", {})
            used = int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0))
            left = f", {max(budget - used, 0):,} left" if budget else ""
            limit = f"{budget:,}" if budget else "none"
            self.style.line(f"session token budget: {limit} ({used:,} used{left})", "dim")
            return
        if not (argument.isascii() and argument.isdigit() and len(argument) <= BUDGET_DIGITS):
            self.style.line(
                f"/budget {one_line(argument, 40)}: not a whole number of tokens "
                "(usage: /budget N, 0 removes the budget)",
                "yellow",
            )
            return
        self._configure(token_budget=int(argument))

    def _mode(self, argument: str) -> None:
        if argument:  # every client, this one too, hears of it by `mode.changed`
            self._configure(mode=argument)
            return
        current = self.conn.request(methods.SESSION_CONFIGURE, {"session": self.session})
        self.style.line(describe(str(current["options"].get("mode") or "ask")), "dim")

    def _debug(self, argument: str) -> None:
        from coding_harness.client.session.setup import debug_command

        debug_command(self.conn, self.session, argument, self.style)
