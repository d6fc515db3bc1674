"""Tab completion in the REPL: slash commands, their arguments, and skills.

`/` completes the commands (`SlashCommands.names()`) and the skills the
daemon knows (`skills.list`, shown as `/<name>` with their description);
`/provider ` completes provider names, `/model ` model ids (from
`provider.list`, asked again at most every few seconds, and what the session's
server offers, `model.list`, asked once), `/search ` the search engines, `/mode `
the permission modes, `/memory ` its verbs, `/save ` and `/load ` paths. In a
task, a word that starts with `@` completes as a path in the session's folder
(the file is attached when the task is sent: `mentions.py`). A daemon without
`skills.list` answers -32601: skills are then simply not offered, and not asked
again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from prompt_toolkit.completion import CompleteEvent, Completer, Completion, PathCompleter
from prompt_toolkit.document import Document

from coding_harness.protocol import errors, methods
from coding_harness.protocol.client import Connection, DaemonUnreachable
from coding_harness.protocol.modes import PERMISSION_MODES
from coding_harness.protocol.vocabulary import SEARCH_ENGINES, SEARCH_OFF

SEARCH_CHOICES = (*SEARCH_ENGINES, SEARCH_OFF)
MEMORY_VERBS = ("add", "clear", "edit", "rm")
PATH_COMMANDS = ("/save", "/load")
REFRESH_SECONDS = 5.0


class DaemonValues:
    """Provider names, model ids and skills, asked of the daemon and kept briefly."""

    def __init__(self, conn: Connection, session: str, cwd: str) -> None:
        self.conn, self.session, self.cwd = conn, session, cwd
        self._providers: list[dict[str, Any]] = []
        self._asked_at = -REFRESH_SECONDS
        self._skills: list[tuple[str, str]] | None = None
        self._offered: list[str] | None = None

    def providers(self) -> list[str]:
        return sorted({str(p["name"]) for p in self._provider_list() if p.get("name")})

    def models(self) -> list[str]:
        configured = {str(p["model"]) for p in self._provider_list() if p.get("model")}
        if self._offered is None:
            found = self._ask(methods.MODEL_LIST, {"session": self.session})
            listed = found.get("models") if isinstance(found, dict) else None
            self._offered = [str(m) for m in listed or []]
        return sorted(configured | set(self._offered))

    def skills(self) -> list[tuple[str, str]]:
        if self._skills is None:
            found = self._ask(methods.SKILLS_LIST, {"cwd": self.cwd})
            listed = found.get("skills") if isinstance(found, dict) else None
            self._skills = [
                (str(s["name"]), " ".join(str(s.get("description") or "").split()))
                for s in listed or []
                if isinstance(s, dict) and s.get("name")
            ]
        return self._skills

    def _provider_list(self) -> list[dict[str, Any]]:
        if time.monotonic() - self._asked_at >= REFRESH_SECONDS:
            found = self._ask(methods.PROVIDER_LIST, {"session": self.session})
            if isinstance(found, dict):
                self._providers = [p for p in found.get("providers") or [] if isinstance(p, dict)]
            self._asked_at = time.monotonic()
        return self._providers

    def _ask(self, method: str, params: dict[str, Any]) -> Any:
        """The answer, or None when the daemon lacks the method or cannot answer now."""
        try:
            return self.conn.request(method, params, timeout=5.0)
        except (errors.RpcError, DaemonUnreachable):
            return None


class SlashCompleter(Completer):
    def __init__(
        self, commands: Callable[[], Iterable[str]], values: DaemonValues | None = None
    ) -> None:
        self.commands = commands
        self.values = values
        self._paths = PathCompleter(expanduser=True)

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterator[Completion]:
        text = document.text_before_cursor
        word = text.split(" ")[-1].split("\n")[-1]
        if word.startswith("@") and not text.startswith("/"):
            yield from self._mention(word[1:], complete_event)
            return
        if not text.startswith("/") or "\n" in text:
            return
        if " " not in text:
            yield from self._names(text)
            return
        command, _, argument = text.partition(" ")
        if command in PATH_COMMANDS:
            yield from self._paths.get_completions(Document(argument), complete_event)
            return
        for value in self._arguments(command):
            if value.startswith(argument) and value != argument:
                yield Completion(value, start_position=-len(argument))

    def _mention(self, typed: str, event: CompleteEvent) -> Iterator[Completion]:
        """`@PATH`: paths under the session's folder (or absolute, or under ~)."""
        cwd = self.values.cwd if self.values is not None else ""
        paths = PathCompleter(expanduser=True, get_paths=lambda: [cwd or "."])
        yield from paths.get_completions(Document(typed), event)

    def _names(self, typed: str) -> Iterator[Completion]:
        for name in self.commands():
            if name.startswith(typed):
                yield Completion(name, start_position=-len(typed))
        skills = self.values.skills() if self.values is not None else []
        for name, description in skills:
            if f"/{name}".startswith(typed):
                yield Completion(
                    f"/{name}", start_position=-len(typed), display_meta=description[:60]
                )

    def _arguments(self, command: str) -> list[str]:
        if command == "/search":
            return list(SEARCH_CHOICES)
        if command == "/memory":
            return list(MEMORY_VERBS)
        if command == "/mode":
            return list(PERMISSION_MODES)
        if command == "/mcp":
            return ["list", "restart"]
        if self.values is None:
            return []
        if command == "/provider":
            return self.values.providers()
        if command == "/model":
            return self.values.models()
        return []
