"""`session.configure`: `/allow-cmd`, `/search`, `/budget`, `/debug` and `/mode`, for
every client.

Every parameter is checked before any is applied, so a refused request changes
nothing. Each change but `/debug` and `/mode` is told to every attached client
as a notice naming who made it; a mode is told by a `mode.changed {mode,
client}` event (the next turn runs in it; a running turn keeps its own);
`/debug`'s path is the answer, printed by the client that asked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from coding_harness.daemon.config.mcp_settings import parse_servers
from coding_harness.daemon.methods.lookup import session_of
from coding_harness.daemon.methods.params import refuse_tool_children
from coding_harness.daemon.methods.parts import MethodParts
from coding_harness.daemon.methods.session_methods import permission_mode
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.server.rpc import Handler
from coding_harness.daemon.sessions.debug_log import DEBUG_SWITCHES
from coding_harness.daemon.sessions.session import Session
from coding_harness.daemon.tools.shell.allow_list import MCP_PREFIX, BadEntry, checked_entry
from coding_harness.protocol import errors
from coding_harness.protocol import methods as m
from coding_harness.protocol.methods import EventKind
from coding_harness.protocol.vocabulary import SEARCH_ENGINE_ALIASES, SEARCH_ENGINES

# A checked change, not yet made: making it returns the notice to send (None: none).
Change = Callable[[], str | None]


async def session_configure(
    parts: MethodParts,
    conn: Connection,
    session: Any,
    allow_command: Any = None,
    search: Any = None,
    token_budget: Any = None,
    debug: Any = None,
    mode: Any = None,
    mcp_servers: Any = None,
) -> dict[str, Any]:
    refuse_tool_children(conn)
    target = session_of(parts, session)
    if search == "toggle":  # bare /search: the opposite of what is in force now
        current = target.options.search_enabled
        if current is None:
            current = parts.configs.get(target.cwd).search.enabled
        search = not current
    checked = [
        change
        for change in (
            _debug(target, debug),
            _allow(target, allow_command),
            _search(target, search),
            _budget(target, token_budget),
            _mode(target, mode, conn.label),
            _mcp_servers(target, mcp_servers, conn.label),
        )
        if change is not None
    ]
    for change in checked:
        notice = change()
        if notice:
            who = f"{conn.client_name}, pid {conn.peer_pid}"  # no connection id: a person reads it
            target.emit(EventKind.NOTICE, {"message": f"{notice} (by {who})"})
    path = DEBUG_SWITCHES.path(target.id)
    return {
        "options": target.options.to_wire(),
        "debug_log": str(path) if path else None,
        "search": _search_in_force(parts, target),
    }


def _search_in_force(parts: MethodParts, target: Session) -> dict[str, Any]:
    """Web search as the session's next turn has it: the session's choice over the config's."""
    config = parts.configs.get(target.cwd).search
    enabled = target.options.search_enabled
    return {
        "enabled": config.enabled if enabled is None else enabled,
        "engine": target.options.search_engine or config.engine,
        "from": "config" if enabled is None else "session",
    }


def _debug(target: Session, value: Any) -> Change | None:
    """`/debug on|off`, `--debug`: the session's raw model exchanges go to its debug log.
    No notice: the client that asked prints the path."""
    if value is None:
        return None
    if not isinstance(value, bool):
        raise errors.InvalidParams("debug must be true or false")

    def switch() -> None:
        DEBUG_SWITCHES.set(target.id, value)

    return switch


def _mode(target: Session, value: Any, client: str) -> Change | None:
    """`/mode NAME`, `--mode` on a session joined, ACP's session/set_mode."""
    mode = permission_mode(value)
    if mode is None:
        return None

    def switch() -> None:
        target.options.mode = mode
        if target.store is not None:
            target.store.set_mode(target.id, mode)
        target.emit(EventKind.MODE_CHANGED, {"mode": mode, "client": client})

    return switch


def _mcp_servers(target: Session, value: Any, client: str) -> Change | None:
    """An editor's MCP servers (ACP's `mcpServers`), in the `mcp_servers` shape: they
    replace the ones a client gave before; a bad entry is named and left out."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise errors.InvalidParams("mcp_servers must be an object of MCP server entries")
    problems: list[str] = []

    def origin_of(path: tuple[str, ...]) -> str:
        return f"the MCP servers {client} gave"

    servers = parse_servers(value, origin_of, problems, scope="client", default_cwd=str(target.cwd))

    def replace() -> str:
        target.options.mcp_servers = servers
        names = ", ".join(sorted(servers)) or "none"
        return "; ".join([f"MCP servers of this session: {names}", *problems])

    return replace


def _allow(target: Session, value: Any) -> Change | None:
    """`/allow-cmd PROGRAM [SUBCOMMAND]`: a program for run_shell (or only its SUBCOMMAND,
    `git log`), a command that asks (`uv run`, `make clean`) or an MCP tool to run
    unasked (`allow_list.py`)."""
    if value is None:
        return None
    try:
        name = checked_entry(value if isinstance(value, str) else "")
    except BadEntry as exc:
        raise errors.InvalidParams(f"allow_command: {exc}") from None

    def allow() -> str:
        target.options.extra_commands.add(name)
        if name.startswith(MCP_PREFIX):
            return f"the MCP tool {name} is now called without asking in this session"
        if " " in name or name == "make":
            return f"`{name}` now runs without asking in this session"
        return f"run_shell may now run {name!r} in this session"

    return allow


def _search(target: Session, value: Any) -> Change | None:
    if value is None:
        return None
    if value in (True, False):
        on = bool(value)

        def switch() -> str:
            target.options.search_enabled = on
            return f"web search {'on' if on else 'off'}"

        return switch
    engine = SEARCH_ENGINE_ALIASES.get(value, value) if isinstance(value, str) else value
    if engine not in SEARCH_ENGINES:
        raise errors.InvalidParams(
            f"search must be true, false or one of {', '.join(SEARCH_ENGINES)}"
        )

    def choose() -> str:
        target.options.search_enabled, target.options.search_engine = True, str(engine)
        return f"web search on, with {engine}"

    return choose


def _budget(target: Session, value: Any) -> Change | None:
    if value is None:
        return None
    if value != 0 and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
        raise errors.InvalidParams("token_budget must be a whole number of tokens (0 removes it)")
    budget = int(value) or None

    def set_budget() -> str:
        target.options.token_budget = budget
        if budget is None:
            return "session token budget removed"
        return f"session token budget set to {budget:,} tokens"

    return set_budget


HANDLERS: dict[str, Handler] = {m.SESSION_CONFIGURE: session_configure}
