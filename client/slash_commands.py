"""The REPL's slash commands, each one line in `/help`.

A command runs before any model call. Those that change the session go
through the daemon, so every attached terminal sees the result.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from coding_harness.protocol import errors, methods
from coding_harness.protocol.client import Connection

from .attach import print_history
from .style import Style

QUIT = "quit"


class SlashCommands:
    def __init__(self, conn: Connection, session: str, style: Style) -> None:
        self.conn = conn
        self.session = session
        self.style = style
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
            "/allow-cmd": ("/allow-cmd NAME: let run_shell run NAME in this session", self._allow),
            "/search": (
                "/search [brave|exa|duckduckgo|off]: web search for the agent",
                self._search,
            ),
            "/budget": ("/budget [N]: the session's token budget (0 removes it)", self._budget),
        }

    def names(self) -> list[str]:
        return sorted(self._commands)

    def handle(self, line: str) -> str | None:
        """Run a slash command; QUIT to leave, None when done."""
        name, _, argument = line.partition(" ")
        name = "/quit" if name == "/exit" else name
        entry = self._commands.get(name)
        if entry is None:
            self.style.line(f"unknown command {name}; /help lists them", "yellow")
            return None
        try:
            return entry[1](argument.strip())
        except errors.RpcError as exc:
            self.style.line(exc.message, "red")
            return None

    def _help(self, _: str) -> None:
        for name, (summary, _handler) in sorted(self._commands.items()):
            print(f"{name:<10} {summary}")
        print("Anything else is a task for the agent. Ctrl-C cancels a running turn.")

    def _messages(self) -> list[dict[str, Any]]:
        result = self.conn.request(methods.SESSION_HISTORY, {"session": self.session})
        return list(result["messages"])

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
        path = Path(argument).expanduser()
        messages = self._messages()
        path.write_text(json.dumps({"messages": messages}, indent=2, ensure_ascii=False) + "\n")
        self.style.line(f"saved {len(messages)} messages to {path}", "dim")

    def _load(self, argument: str) -> None:
        if not argument:
            self.style.line("usage: /load FILE", "yellow")
            return
        path = Path(argument).expanduser()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            self.style.line(f"cannot load {path}: {exc}; the conversation is unchanged", "red")
            return
        messages = data.get("messages") if isinstance(data, dict) else data
        result = self.conn.request(
            methods.SESSION_RESET, {"session": self.session, "messages": messages}
        )
        self.style.line(f"loaded {result['messages']} messages from {path}", "dim")

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
            print(f"{mark} {entry.get('name'):<16} {entry.get('model')}  {entry.get('endpoint')}")

    def _model(self, argument: str) -> None:
        if not argument:
            self.style.line("usage: /model ID", "yellow")
            return
        switched = self.conn.request(
            methods.MODEL_USE, {"session": self.session, "model": argument}
        )
        self.style.line(f"now using {switched.get('provider')} · {switched.get('model')}", "dim")

    def _tokens(self, _: str) -> None:
        stats = self.conn.request(methods.STATS_GET, {"session": self.session})
        mine = stats["session"]
        print("this session: " + _usage_line(mine["usage"], mine["cost_usd"]))
        for row in stats["daily"][-7:]:
            print(f"{row['day']} {row['provider']:<14} " + _usage_line(row, row["cost_usd"]))

    def _configure(self, **change: Any) -> None:
        self.conn.request(methods.SESSION_CONFIGURE, {"session": self.session, **change})

    def _allow(self, argument: str) -> None:
        if not argument:
            self.style.line("usage: /allow-cmd NAME", "yellow")
            return
        self._configure(allow_command=argument)

    def _search(self, argument: str) -> None:
        self._configure(search=False if argument == "off" else (argument or True))

    def _budget(self, argument: str) -> None:
        if not argument:
            current = self.conn.request(methods.SESSION_CONFIGURE, {"session": self.session})
            budget = current["options"].get("token_budget")
            self.style.line(f"session token budget: {budget or 'none'}", "dim")
            return
        if not argument.isdigit():
            self.style.line("usage: /budget N (0 removes the budget)", "yellow")
            return
        self._configure(token_budget=int(argument))


def _usage_line(usage: dict[str, Any], cost: float | None) -> str:
    money = "cost unknown" if cost is None else f"${cost:.4f}"
    return (
        f"{usage.get('prompt_tokens', 0):,} prompt ({usage.get('cached_tokens', 0):,} cached), "
        f"{usage.get('completion_tokens', 0):,} completion, {money}"
    )
