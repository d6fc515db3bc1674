"""The REPL's Tab completion: commands, skills, providers, models, engines, paths; and a
daemon without `skills.list` (-32601) is asked once and then left alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from coding_harness.client.repl.completer import DaemonValues, SlashCompleter
from coding_harness.protocol import errors, methods

COMMANDS = ["/help", "/history", "/model", "/provider", "/save", "/search", "/quit"]


class FakeDaemon:
    """Answers provider.list and skills.list like a daemon; counts the requests."""

    def __init__(self, *, skills: bool = True) -> None:
        self.skills = skills
        self.asked: list[str] = []

    def request(self, method: str, params: dict[str, Any] | None = None, timeout: float = 0) -> Any:
        self.asked.append(method)
        if method == methods.PROVIDER_LIST:
            return {
                "providers": [
                    {"name": "local", "model": "qwen2.5-coder:7b"},
                    {"name": "fireworks", "model": "accounts/fireworks/models/deepseek-v3"},
                ]
            }
        if method == methods.SKILLS_LIST and self.skills:
            return {"skills": [{"name": "review", "description": "review   the diff\ncarefully"}]}
        raise errors.MethodNotFound(f"no method {method}")


def completions(completer: SlashCompleter, text: str) -> list[str]:
    found = completer.get_completions(Document(text), CompleteEvent(completion_requested=True))
    return [c.text for c in found]


def make(daemon: FakeDaemon | None = None) -> SlashCompleter:
    values = DaemonValues(daemon, "s-1", "/tmp") if daemon else None  # type: ignore[arg-type]
    return SlashCompleter(lambda: COMMANDS, values)


def test_commands_and_skills_complete_after_a_slash() -> None:
    completer = make(FakeDaemon())
    assert completions(completer, "/h") == ["/help", "/history"]
    assert completions(completer, "/re") == ["/review"]
    [skill] = completer.get_completions(Document("/rev"), CompleteEvent())
    assert skill.display_meta_text == "review the diff carefully"
    assert completions(completer, "plain text") == []


def test_arguments_complete_per_command() -> None:
    completer = make(FakeDaemon())
    assert completions(completer, "/provider f") == ["fireworks"]
    assert completions(completer, "/provider ") == ["fireworks", "local"]
    assert completions(completer, "/model qw") == ["qwen2.5-coder:7b"]
    assert completions(completer, "/search d") == ["duckduckgo"]
    assert completions(completer, "/search ") == ["brave", "exa", "duckduckgo", "off"]
    assert completions(completer, "/history x") == []
    assert completions(completer, "/mcp r") == ["restart"]


def test_save_and_load_complete_paths(tmp_path: Path) -> None:
    (tmp_path / "chat.json").write_text("{}")
    completer = make()
    assert completions(completer, f"/save {tmp_path}/ch") == ["at.json"]  # the rest of it


def test_a_daemon_without_skills_list_is_asked_once() -> None:
    daemon = FakeDaemon(skills=False)
    completer = make(daemon)
    assert completions(completer, "/h") == ["/help", "/history"]
    assert completions(completer, "/r") == []
    assert daemon.asked.count(methods.SKILLS_LIST) == 1


def test_provider_list_is_kept_for_a_few_seconds() -> None:
    daemon = FakeDaemon()
    completer = make(daemon)
    for _ in range(3):
        completions(completer, "/provider ")
        completions(completer, "/model ")
    assert daemon.asked.count(methods.PROVIDER_LIST) == 1


def test_without_a_daemon_only_commands_and_engines_complete() -> None:
    completer = make()
    assert completions(completer, "/q") == ["/quit"]
    assert completions(completer, "/provider ") == []
    assert completions(completer, "/search e") == ["exa"]
