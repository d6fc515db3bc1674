"""Whole turns through the real `TurnRunner` over a scripted model (tests/support).

`TurnHarness` makes a home with a config, a workspace and a session, and runs
turns or compactions to their end; `FakePool` hands every profile the one
scripted model; `say` and `calls` build its replies. Shared by the turn, plan,
compaction, notes and skill tests (their HOME comes from the `home_in_tmp`
fixture in tests/unit/daemon/conftest.py).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from coding_harness.daemon.agent.seams import JSONObject, ModelReply, ToolCall
from coding_harness.daemon.config.loader import ConfigCache
from coding_harness.daemon.providers.model_gate import ModelGates
from coding_harness.daemon.providers.window import NOTHING, ServerWindow
from coding_harness.daemon.sessions.session import Session
from coding_harness.daemon.tools.builtin import build_tools
from coding_harness.daemon.turns.runner import TurnRunner
from tests.support.notes_requests import NotesApart
from tests.support.scripted_model import ScriptedModel


class FakePool:
    """Stands in for `ProviderPool`: every profile gets the one scripted model, except
    that the turn-close notes call is answered apart (`notes`, tests/support)."""

    def __init__(self, model: ScriptedModel) -> None:
        self.model = model
        self.notes = NotesApart(model)
        self.facts = NoFacts()
        self.gates = ModelGates()

    def model_for(
        self, profile: Any, api_key: str | None, recorder: object = None, **_gate: Any
    ) -> NotesApart:
        return self.notes


class NoFacts:
    """Stands in for `ModelFacts`: there is no server to ask, so nothing is known."""

    def __init__(self) -> None:
        self.refused: set[str] = set()

    async def window(self, profile: Any, api_key: str | None) -> ServerWindow:
        return NOTHING

    def forget_window(self, profile: Any) -> None:
        pass

    def no_tools(self, profile: Any) -> bool:
        return not profile.tools or profile.model in self.refused

    def remember_no_tools(self, profile: Any) -> None:
        self.refused.add(profile.model)

    async def tool_models(self, profile: Any, api_key: str | None) -> list[str]:
        return []


def say(text: str) -> ModelReply:
    return ModelReply(content=text)


def calls(*pairs: tuple[str, dict[str, Any]]) -> ModelReply:
    return ModelReply(
        tool_calls=[
            ToolCall(id=f"c{i}", name=name, arguments=json.dumps(args))
            for i, (name, args) in enumerate(pairs)
        ]
    )


class TurnHarness:
    """A home with a config, a workspace, a session and a runner over a scripted model."""

    def __init__(
        self,
        root: Path,
        replies: list[ModelReply | Exception],
        *,
        agent: dict[str, Any] | None = None,
        generation: dict[str, Any] | None = None,
    ) -> None:
        self.home, self.cwd = root / "home", root / "proj"
        self.home.mkdir(exist_ok=True)
        self.cwd.mkdir(exist_ok=True)
        profile = {"type": "openai", "endpoint": "https://models.example/v1", "model": "weak"}
        config = {
            "default_provider": "fake",
            "providers": {"fake": {**profile, "generation": generation or {}}},
            "agent": {"list_ports": False, **(agent or {})},
        }
        (self.home / ".coding_harness.json").write_text(json.dumps(config))
        self.model = ScriptedModel(replies)
        self.configs = ConfigCache(self.home, trust_store=root / "trust.json")
        self.session = Session(id="s-test", cwd=self.cwd)

    def turn(self, text: str, **options: Any) -> JSONObject:
        """Run one turn to its end; returns the `turn.finished` data."""
        return asyncio.run(self._turn(text, options))

    def compact(self) -> JSONObject:
        """Run a `session.compact` job; returns its result."""
        return asyncio.run(self._compact())

    def _runner(self) -> TurnRunner:
        pool: Any = FakePool(self.model)
        return TurnRunner(configs=self.configs, pool=pool, build_tools=build_tools)

    async def _compact(self) -> JSONObject:
        runner = self._runner()
        try:
            return await runner.compact(self.session)
        finally:
            await runner.close()

    async def _turn(self, text: str, options: dict[str, Any]) -> JSONObject:
        runner = self._runner()
        try:
            started = runner.submit(
                self.session, text, auto_approve=True, dry_run=False, options=options
            )
            return await self._finished(started["turn"])
        finally:
            await runner.close()

    async def _finished(self, turn: str) -> JSONObject:
        for _ in range(2000):
            for event in self.session.events:
                if event.kind == "turn.finished" and event.data["turn"] == turn:
                    return event.data
            await asyncio.sleep(0.005)
        raise AssertionError(f"turn {turn} did not finish")

    def events(self, kind: str) -> list[JSONObject]:
        return [e.data for e in self.session.events if e.kind == kind]

    def sent(self, index: int = -1) -> JSONObject:
        """The payload of one model call."""
        return self.model.payloads[index]

    def system(self, index: int = -1) -> str:
        return str(self.sent(index)["messages"][0]["content"])


def tool_names(payload: JSONObject) -> list[str]:
    return [tool["function"]["name"] for tool in payload.get("tools") or []]
