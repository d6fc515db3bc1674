"""One turn's hooks: which run for an event, running them, and saying what they did.

`HookRunner.run(event, fields, tool)` runs every hook of the turn's config that
matches, side by side, each with the event as one JSON object on standard input
(`session_id`, `cwd`, `hook_event_name` and the event's own fields), and returns
their merged `HookAnswer`. Each run is a `hook` event on the session
(`{event, command, exit_code, blocked, output}`), a line in the session's
`--debug` log when that is on, and each non-blocking error a `notice`. Output
shown anywhere goes through the session's secrets first.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from coding_harness.daemon.agent.seams import EventSink, JSONObject
from coding_harness.daemon.config.hook_settings import HookSettings, HookSpec
from coding_harness.daemon.hooks.answers import HookAnswer, read_answer
from coding_harness.daemon.hooks.spawn import HookProcess, run_hook_command
from coding_harness.protocol.methods import EventKind

EVENT_OUTPUT = 2000


class DebugLine(Protocol):
    """The session's `--debug` log (`sessions/debug_log.DebugRecorder`)."""

    def write(self, entry: JSONObject) -> None: ...


@dataclass(kw_only=True, slots=True)
class HookRunner:
    settings: HookSettings
    session: str
    cwd: Path
    env: Mapping[str, str]  # the tool environment: no key of the daemon's
    events: EventSink
    redact: Callable[[str], str] = str
    debug: DebugLine | None = None

    def wanted(self, event: str, tool: str | None = None) -> bool:
        return bool(self.settings.for_event(event, tool))

    async def run(self, event: str, fields: JSONObject, tool: str | None = None) -> HookAnswer:
        """Run the hooks of `event` (for `tool`); their answers merged in config order."""
        specs = self.settings.for_event(event, tool)
        answer = HookAnswer()
        if not specs:
            return answer
        payload: JSONObject = {
            "session_id": self.session,
            "session": self.session,
            "cwd": str(self.cwd),
            "hook_event_name": event,
            **fields,
        }
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8") + b"\n"
        runs = await asyncio.gather(*(self._one(spec, data) for spec in specs))
        for spec, run in zip(specs, runs, strict=True):
            one = read_answer(spec, run)
            self._report(spec, run, one, payload)
            answer.merge(one)
        return self._redacted(answer)

    def _redacted(self, answer: HookAnswer) -> HookAnswer:
        """What the model, the user and the store get of the answer, without secrets."""
        answer.reasons = [self.redact(r) for r in answer.reasons]
        answer.context = [self.redact(c) for c in answer.context]
        answer.failures = [self.redact(f) for f in answer.failures]
        answer.halt = None if answer.halt is None else self.redact(answer.halt)
        return answer

    async def _one(self, spec: HookSpec, data: bytes) -> HookProcess:
        return await run_hook_command(
            spec.command, data, cwd=self.cwd, env=self.env, limit=spec.timeout
        )

    def _report(self, spec: HookSpec, run: HookProcess, answer: HookAnswer, stdin: Any) -> None:
        output = self.redact("\n".join(t for t in (run.stderr.strip(), run.stdout.strip()) if t))
        if len(output) > EVENT_OUTPUT:
            output = output[: EVENT_OUTPUT - 3] + "..."
        self.events.emit(
            EventKind.HOOK,
            {
                "event": spec.event,
                "command": self.redact(spec.command),
                "exit_code": run.exit_code,
                "blocked": answer.blocked,
                "output": output,
            },
        )
        for failure in answer.failures:
            self.events.emit(EventKind.NOTICE, {"message": f"{self.redact(failure)}; went on"})
        if self.debug is not None:
            self.debug.write(
                {
                    "hook": spec.event,
                    "command": spec.command,
                    "stdin": stdin,
                    "exit_code": run.exit_code,
                    "timed_out": run.timed_out,
                    "stdout": run.stdout,
                    "stderr": run.stderr,
                }
            )
