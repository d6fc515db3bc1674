"""The REPL's slash commands, each one line in `/help`: the table and the dispatch.

The commands live by job in the modules beside this one: `slash_conversation.py`
(history, reset, save, load, resume, `!CMD`), `slash_settings.py` (provider,
model, usage, switches), `slash_agent.py` (context, compaction, plans, skills,
routes, /init), and one module each for /map, /mcp, /memory, /undo. Claude Code's
names work too: `/clear` is `/reset`, `/exit` is `/quit`. A line that starts with
`!` is the user's own shell command (`ConversationCommands.shell`).

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

from coding_harness.client.render.sanitize import one_line
from coding_harness.client.render.style import Style
from coding_harness.client.repl.allow_command import USAGE as ALLOW_USAGE
from coding_harness.client.repl.allow_command import AllowCommand
from coding_harness.client.repl.map_command import USAGE as MAP_USAGE
from coding_harness.client.repl.map_command import MapCommand
from coding_harness.client.repl.mcp_command import USAGE as MCP_USAGE
from coding_harness.client.repl.mcp_command import McpCommand
from coding_harness.client.repl.memory_command import MemoryCommand
from coding_harness.client.repl.slash_agent import AgentCommands, RunTurn
from coding_harness.client.repl.slash_conversation import QUIT, ConversationCommands
from coding_harness.client.repl.slash_files import BadFile
from coding_harness.client.repl.slash_settings import SettingsCommands
from coding_harness.client.repl.undo_command import USAGE as UNDO_USAGE
from coding_harness.client.repl.undo_command import UndoCommands
from coding_harness.client.repl.worktree_command import USAGE as WORKTREE_USAGE
from coding_harness.client.repl.worktree_command import WorktreeCommand
from coding_harness.protocol import errors
from coding_harness.protocol.client import Connection
from coding_harness.protocol.modes import PERMISSION_MODES
from coding_harness.protocol.vocabulary import ROUTES, SEARCH_ENGINES, SEARCH_OFF

ALIASES = {"/exit": "/quit", "/clear": "/reset"}
__all__ = ["QUIT", "RunTurn", "SlashCommands"]


class SlashCommands(ConversationCommands, SettingsCommands, AgentCommands):
    def __init__(
        self,
        conn: Connection,
        session: str,
        style: Style,
        run_turn: RunTurn | None = None,
        *,
        cwd: str = "",
    ) -> None:
        self.conn = conn
        self.session = session
        self.cwd = cwd
        self.style = style
        self.run_turn = run_turn or self._follow_plainly
        self._offered: list[str] = []
        self.resume_to: str | None = None  # set by `/resume ID`, which then leaves
        undo = UndoCommands(conn, session, style)
        self._commands: dict[str, tuple[str, Callable[[str], str | None]]] = {
            "/help": ("this list", self._help),
            "/history": ("the conversation so far", self._history),
            "/reset": ("start the conversation afresh (same session; /clear too)", self._reset),
            "/save": ("/save FILE: write the conversation to a JSON file", self._save),
            "/load": ("/load FILE: replace the conversation with one saved by /save", self._load),
            "/quit": ("leave (the session stays in the daemon; Ctrl-D too)", lambda _: QUIT),
            "/provider": ("/provider [NAME]: show or switch the provider profile", self._provider),
            "/model": ("/model [ID|N]: the model, what its server offers; pick one", self._model),
            "/tokens": ("tokens and cost of this session, and today's totals", self._tokens),
            "/cost": ("this session's tokens and money, in one line", self._cost),
            "/resume": ("/resume [N|ID]: list the sessions, or open one here", self._resume),
            "/init": ("write AGENTS.md for this project (an edit to approve)", self._init),
            "/allow-cmd": (ALLOW_USAGE, AllowCommand(conn, session, style)),
            "/search": (
                f"/search [{'|'.join((*SEARCH_ENGINES, SEARCH_OFF))}]: web search, or its state",
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
            "/worktree": (WORKTREE_USAGE, WorktreeCommand(conn, style)),
        }

    def names(self) -> list[str]:
        return sorted([*self._commands, *ALIASES])

    def handle(self, line: str) -> str | None:
        """Run a slash command (or a `!` shell command); QUIT to leave (`resume_to` then
        names the session to open instead, after `/resume ID`), None when done."""
        if line.startswith("!"):
            return self._guarded(self.shell, line[1:].strip())
        name, _, argument = line.partition(" ")
        name = ALIASES.get(name, name)
        entry = self._commands.get(name)
        if entry is None:
            return self._guarded(lambda task: self._skill(name, task), argument.strip())
        return self._guarded(entry[1], argument.strip())

    def _guarded(self, run: Callable[[str], str | None], argument: str) -> str | None:
        try:
            return run(argument)
        except errors.RpcError as exc:
            self.style.line(one_line(exc.message, 300), "red")
        except BadFile as exc:
            self.style.line(str(exc), "red")
        return None

    def _help(self, _: str) -> None:
        width = max(len(name) for name in self._commands) + 2
        for name, (summary, _handler) in sorted(self._commands.items()):
            print(f"{name:<{width}}{summary}")
        print(f"{'/<skill>':<{width}}/<skill> [task]: a task with a skill (see /skills)")
        print(f"{'!CMD':<{width}}run CMD in your own shell; its output joins the conversation")
        print(f"{'@PATH':<{width}}in a task: attach that file (Tab completes the path)")
        print("Anything else is a task for the agent.")
