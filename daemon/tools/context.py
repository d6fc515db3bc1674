"""What one turn's tools share: the workspace, the people, the flags, the tally.

`ToolContext` is built once per turn and handed to every tool call; the
`TurnOutcome` it carries is how tools report what happened (edits rejected,
files changed, a failed check) so the turn can end with the right code.
Every setting has a safe default: no extra programs, no fetching from private
addresses, no web search, every write asked (permission mode `ask`).
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from coding_harness.daemon.agent.seams import Approver, EventSink
from coding_harness.daemon.security.secrets import Secrets
from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.shell.process import tool_environment
from coding_harness.daemon.tools.shell.sandbox import Sandbox
from coding_harness.daemon.tools.web.fetch import FetchPolicy
from coding_harness.daemon.tools.web.search import SearchEngine
from coding_harness.daemon.tools.workspace import Workspace
from coding_harness.protocol import exit_codes
from coding_harness.protocol.modes import ACCEPT_EDITS, ASK, READ_ONLY


@dataclass(kw_only=True, slots=True)
class TurnOutcome:
    """What the tools did during one turn."""

    edits_rejected: int = 0
    last_check_failed: bool = False
    files_changed: list[str] = field(default_factory=list)
    dry_run_diffs: int = 0
    # The build files as the user last saw them (`build_files.py`); None: unwatched.
    build_files: dict[str, bytes | None] | None = None
    # The last check run after an edit, `{"command", "passed"}`; None: none ran.
    check: dict[str, object] | None = None
    check_told: str = ""  # the last notice about the check (edit/checks.py), said once

    def record_change(self, rel_path: str) -> None:
        if rel_path not in self.files_changed:
            self.files_changed.append(rel_path)

    def exit_code(self) -> int:
        """2 when the last check failed, 3 when an edit was refused, else 0."""
        if self.last_check_failed:
            return exit_codes.CHECK_FAILED
        if self.edits_rejected:
            return exit_codes.EDIT_REJECTED
        return exit_codes.OK


class PlanHooks(Protocol):
    """The session's plan as tools see it (`plan_book.PlanKeeper`)."""

    def commit(self, raw_steps: str) -> str:
        """Record a plan from what commit_plan was sent; returns the tool result."""
        ...

    def after_write(self, rel: str, text: str) -> str:
        """Look at an applied write; returns a note for its tool result, or ''."""
        ...


class SymbolLookup(Protocol):
    """The workspace's code index, as `find_symbol` asks it (`daemon/index/symbols.py`)."""

    async def find(self, name: str) -> str: ...


class BufferSource(Protocol):
    """The text an editor holds for a file, unsaved changes included."""

    async def read_text(self, path: Path) -> str | None:
        """The buffer's text of the real, absolute `path`; None: read the disk."""
        ...

    def can_write(self) -> bool:
        """Whether the editor takes edits to its buffers (`write_text`)."""
        ...

    async def write_text(self, path: Path, text: str) -> None:
        """Give the editor `text` as the file's content; `OSError` when it fails."""
        ...


@dataclass(kw_only=True, slots=True)
class ToolContext:
    """Everything a tool call may use; one per turn."""

    workspace: Workspace
    approver: Approver
    events: EventSink
    dry_run: bool = False
    # `-y` for this turn: edits applied without asking, and uv run / uv sync approved.
    auto_approve: bool = False
    # The session's permission mode (`protocol/modes.py`), as the turn started.
    mode: str = ASK
    command_timeout: float = 120.0
    check_timeout: float = 600.0
    # `agent.check_command`: a shell line or an argv; None: the project's own is found.
    check_command: str | tuple[str, ...] | None = None
    outcome: TurnOutcome = field(default_factory=TurnOutcome)
    # Programs run_shell accepts besides its built-in list (`/allow-cmd NAME`), and the
    # commands that ask but need not (`uv run`): the session's own set, so an "always"
    # answered during the turn holds for the rest of it.
    extra_commands: AbstractSet[str] = frozenset()
    # fetch_url's limits; `FetchPolicy(allow_private=True)` lets it reach loopback.
    fetch: FetchPolicy = field(default_factory=FetchPolicy)
    # The session's web search engine; None keeps web_search out of the tool list.
    search: SearchEngine | None = None
    # The session's plan; None (a bare context) leaves commit_plan out of the tool list.
    plans: PlanHooks | None = None
    # The secrets the session knows of: kept out of commands' environments.
    secrets: Secrets = field(default_factory=Secrets)
    # Variables commands get besides the built-in allow-list (`agent.env_pass`).
    env_pass: tuple[str, ...] = ()
    # An attached editor's buffers, which read_file asks before the disk; None: the disk.
    buffers: BufferSource | None = None
    # Where run_shell and make check run (`shell/sandbox.py`); None: as they are.
    sandbox: Sandbox | None = None
    # The workspace's code index for find_symbol; None keeps find_symbol out of the list.
    symbols: SymbolLookup | None = None

    @property
    def accepts_edits(self) -> bool:
        """Writes are applied without asking: `-y`, or the accept-edits mode."""
        return self.auto_approve or self.mode == ACCEPT_EDITS

    @property
    def read_only(self) -> bool:
        """The read-only mode: nothing may be written, no changing command run."""
        return self.mode == READ_ONLY

    def command_argv(self, argv: list[str]) -> list[str]:
        """`argv` as this turn runs a command: inside its sandbox, if it has one;
        `ToolRefusal` when the sandbox is required and missing."""
        if self.sandbox is None:
            return argv
        refusal = self.sandbox.refusal
        if refusal is not None:
            raise ToolRefusal(refusal)
        return self.sandbox.wrap(argv, self.workspace.root)

    def command_environment(self) -> dict[str, str]:
        """The whole environment of a command this turn runs (run_shell, make check)."""
        return tool_environment(drop=self.secrets.names, passed=self.env_pass)
