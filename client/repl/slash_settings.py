"""The slash commands that show or change how the session works: `/provider`,
`/model`, `/tokens`, `/cost`, `/allow-cmd`, `/search`, `/budget`, `/mode` and
`/debug` (mixed into `SlashCommands`).

A change goes through the daemon, whose notice (`next turns use ...`, `web search
on`) reaches every attached terminal, this one included: the command itself
prints nothing more. Bare `/model` shows the model in use and lists what its
server offers (`model.list`), numbered: `/model N` or `/model ID` picks one.
Bare `/search` shows whether the agent searches the web, and with which engine.
"""

from __future__ import annotations

from typing import Any

from coding_harness.client.render.sanitize import one_line, visible
from coding_harness.client.render.style import Style
from coding_harness.client.repl.modes import describe
from coding_harness.protocol import methods
from coding_harness.protocol.client import Connection
from coding_harness.protocol.vocabulary import SEARCH_OFF

BUDGET_DIGITS = 15  # a token budget beyond this is no budget (and int() refuses 4,300 digits)


def cost_text(usage: dict[str, Any], cost: Any) -> str:
    """`1,234 tokens in (1,000 cached), 56 out · $0.0012` (cost unknown without pricing)."""
    sent, cached = int(usage.get("prompt_tokens", 0)), int(usage.get("cached_tokens", 0))
    received = int(usage.get("completion_tokens", 0))
    cached_text = f" ({cached:,} cached)" if cached else ""
    money = "cost unknown (the profile has no pricing)" if cost is None else f"${float(cost):.4f}"
    return f"{sent:,} tokens in{cached_text}, {received:,} out · {money}"


def turn_cost(finished: dict[str, Any]) -> str:
    """The line after a reply when the profile has pricing, as aider prints it."""
    return (
        "cost: "
        + cost_text(finished.get("usage") or {}, finished.get("cost_usd"))
        + (" this turn; /cost for the session")
    )


class SettingsCommands:
    """Provider, model, usage and the session's switches (mixed into `SlashCommands`)."""

    conn: Connection
    session: str
    style: Style
    _offered: list[str]

    def _provider(self, argument: str) -> None:
        if argument:
            self.conn.request(methods.PROVIDER_USE, {"session": self.session, "name": argument})
            return
        listing = self.conn.request(methods.PROVIDER_LIST, {"session": self.session})
        for entry in listing["providers"]:
            mark = "*" if entry.get("name") == listing.get("active") else " "
            line = f"{mark} {entry.get('name'):<16} {entry.get('model')}  {entry.get('endpoint')}"
            print(visible(line))

    def _model(self, argument: str) -> None:
        if not argument:
            self._models()
            return
        if len(argument.split()) > 1:
            self.style.line(
                "usage: /model [ID|N] (one word, as the model server names it)", "yellow"
            )
            return
        if argument.isdigit() and 0 < int(argument) <= len(self._offered):
            argument = self._offered[int(argument) - 1]
        self.conn.request(methods.MODEL_USE, {"session": self.session, "model": argument})

    def _models(self) -> None:
        found = self.conn.request(methods.MODEL_LIST, {"session": self.session}, timeout=15.0)
        current = str(found.get("model") or "")
        self.style.line(f"model: {one_line(current, 120)} (provider {found.get('provider')})")
        self._offered = [str(m) for m in found.get("models") or []]
        if not self._offered:
            why = one_line(str(found.get("error") or "it lists none"), 200)
            self.style.line(f"the server offers no list: {why}; /model ID picks by name", "dim")
            return
        width = len(str(len(self._offered)))
        for number, model in enumerate(self._offered, 1):
            mark = "*" if model == current else " "
            print(visible(f"{mark} {number:>{width}}. {model}"))
        self.style.line("/model N or /model ID picks one for the next turns", "dim")

    def _tokens(self, _: str) -> None:
        from coding_harness.client.render.tables import render_tokens_table

        render_tokens_table(self.conn.request(methods.STATS_GET, {"session": self.session}))

    def _cost(self, argument: str) -> None:
        if argument:
            self.style.line(
                "usage: /cost (it takes no argument; /tokens has today's too)", "yellow"
            )
            return
        stats = self.conn.request(methods.STATS_GET, {"session": self.session})
        mine = stats.get("session") or {}
        self.style.line("this session: " + cost_text(mine.get("usage") or {}, mine.get("cost_usd")))

    def _configure(self, **change: Any) -> dict[str, Any]:
        answer: dict[str, Any] = self.conn.request(
            methods.SESSION_CONFIGURE, {"session": self.session, **change}
        )
        return answer

    def _search(self, argument: str) -> None:
        if argument:
            self._configure(search=False if argument == SEARCH_OFF else argument)
            return
        search = self._configure().get("search") or {}
        state = f"on ({search.get('engine')})" if search.get("enabled") else "off"
        source = "this session's choice" if search.get("from") == "session" else "from the config"
        self.style.line(f"web search: {state}, {source}; /search ENGINE or /search off", "dim")

    def _budget(self, argument: str) -> None:
        if not argument:
            budget = self._configure()["options"].get("token_budget")
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
        current = self._configure()
        self.style.line(describe(str(current["options"].get("mode") or "ask")), "dim")

    def _debug(self, argument: str) -> None:
        from coding_harness.client.session.setup import debug_command

        debug_command(self.conn, self.session, argument, self.style)
