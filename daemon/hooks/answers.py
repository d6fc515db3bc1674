"""What a hook's run means: exit codes and JSON answers read as Claude Code reads them.

Exit 0 goes on; standard output, when it is a JSON object, may carry a decision
(`{"decision": "block", "reason"}`), a stop (`{"continue": false, "stopReason"}`)
and `hookSpecificOutput` (`permissionDecision` "allow" / "deny" / "ask" with its
reason for PreToolUse, `additionalContext` for the model). Plain output of a
UserPromptSubmit hook is context for the model too. Exit 2 blocks, with standard
error as the reason (JSON is not read then). Any other code, a hook that could
not start or ran out of time is a non-blocking error the user is told of.
`HookAnswer.merge` combines the answers of every hook that ran for one event.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from coding_harness.daemon.config.hook_settings import USER_PROMPT_SUBMIT, HookSpec
from coding_harness.daemon.hooks.spawn import HookProcess

BLOCK_EXIT = 2


@dataclass(kw_only=True, slots=True)
class HookAnswer:
    """What the hooks of one event decided."""

    blocked: bool = False
    # Why, for whoever the block is shown to (the model, or the user for a prompt).
    reasons: list[str] = field(default_factory=list)
    # Set by `"continue": false`: the turn stops, and this is said to the user.
    halt: str | None = None
    ask: bool = False  # PreToolUse asked that the user confirm the call
    context: list[str] = field(default_factory=list)  # additionalContext, for the model
    failures: list[str] = field(default_factory=list)  # non-blocking errors, for the user

    @property
    def reason(self) -> str:
        return "\n".join(r for r in self.reasons if r)

    @property
    def added_context(self) -> str:
        return "\n".join(c for c in self.context if c)

    def merge(self, other: HookAnswer) -> None:
        self.blocked = self.blocked or other.blocked
        self.reasons.extend(other.reasons)
        self.halt = self.halt if self.halt is not None else other.halt
        self.ask = self.ask or other.ask
        self.context.extend(other.context)
        self.failures.extend(other.failures)


def read_answer(spec: HookSpec, run: HookProcess) -> HookAnswer:
    if run.start_error:
        return HookAnswer(failures=[f"{_name(spec)} could not start: {run.start_error}"])
    if run.timed_out:
        return HookAnswer(failures=[f"{_name(spec)} ran out of time ({spec.timeout:g} s)"])
    if run.exit_code == BLOCK_EXIT:
        reason = run.stderr.strip() or f"blocked by the {spec.event} hook `{spec.command}`"
        return HookAnswer(blocked=True, reasons=[reason])
    if run.exit_code != 0:
        said = _first_lines(run.stderr) or _first_lines(run.stdout) or "no output"
        return HookAnswer(failures=[f"{_name(spec)} exited with {run.exit_code}: {said}"])
    decoded = _json_object(run.stdout)
    if decoded is None:
        plain = run.stdout.strip()
        context = [plain] if plain and spec.event == USER_PROMPT_SUBMIT else []
        return HookAnswer(context=context)
    return _from_json(decoded)


def _from_json(data: dict[str, Any]) -> HookAnswer:
    answer = HookAnswer()
    if data.get("continue") is False:
        answer.halt = _text(data.get("stopReason")) or "stopped by a hook"
    if data.get("decision") == "block":
        answer.blocked = True
        answer.reasons.append(_text(data.get("reason")))
    specific = data.get("hookSpecificOutput")
    if isinstance(specific, dict):
        decision = specific.get("permissionDecision")
        why = _text(specific.get("permissionDecisionReason"))
        if decision == "deny":
            answer.blocked = True
            answer.reasons.append(why)
        elif decision == "ask":
            answer.ask = True
            answer.reasons.append(why)
        context = _text(specific.get("additionalContext"))
        if context:
            answer.context.append(context)
    return answer


def _json_object(text: str) -> dict[str, Any] | None:
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _first_lines(text: str, lines: int = 3) -> str:
    return " / ".join(line for line in text.strip().splitlines()[:lines] if line.strip())


def _name(spec: HookSpec) -> str:
    return f"the {spec.event} hook `{spec.command}`"


class HookHalt(Exception):
    """A hook ended the turn (`"continue": false`, or a refused prompt): the message is
    for the user; `prompt_refused` says the request never reached the model."""

    def __init__(self, message: str, *, prompt_refused: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.prompt_refused = prompt_refused
