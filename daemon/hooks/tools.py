"""A turn's tools with the PreToolUse and PostToolUse hooks around each call.

`HookedTools` wraps the turn's executor. Before a call of an offered tool (a
name the model made up is left to the tools' own error), the PreToolUse hooks
whose matcher takes the tool's name run with `tool_name`, `tool_input` (the
arguments object, or the raw text when it is not one) and `tool_use_id`: a
block (exit 2, `"decision": "block"`, `permissionDecision` "deny") means the
call does not run and the model gets the hooks' reason as its result; "ask"
puts the call to the user first, even under `-y`; "allow" goes on (it never
skips an approval the tool itself asks for). After the call, the PostToolUse
hooks get `tool_response` (the result text) too; what they say back (a block's
reason, `additionalContext`) is appended to the result for the model. A hook's
`"continue": false` ends the turn (`HookHalt`).
"""

from __future__ import annotations

import json
from typing import Any

from coding_harness.daemon.agent.seams import (
    ApprovalRequest,
    Approver,
    FailedResult,
    JSONObject,
    ToolCall,
    ToolExecutor,
)
from coding_harness.daemon.config.hook_settings import POST_TOOL_USE, PRE_TOOL_USE
from coding_harness.daemon.hooks.answers import HookAnswer, HookHalt
from coding_harness.daemon.hooks.runner import HookRunner

_SHOWN_ARGUMENTS = 400


class HookedTools:
    """The turn's executor, each call between its PreToolUse and PostToolUse hooks."""

    def __init__(self, inner: ToolExecutor, hooks: HookRunner, approver: Approver) -> None:
        self._inner = inner
        self._hooks = hooks
        self._approver = approver

    def schemas(self) -> list[JSONObject]:
        return self._inner.schemas()

    def _known(self) -> set[str]:
        """The tools offered: a name the model made up never meets a hook's matcher."""
        return {str(s.get("function", {}).get("name")) for s in self._inner.schemas()}

    async def execute(self, call: ToolCall) -> str:
        name = call.name.strip()
        if name not in self._known():  # the tools answer it with an error; no hook runs
            return await self._inner.execute(call)
        fields: JSONObject = {
            "tool_name": name,
            "tool_input": _tool_input(call.arguments),
            "tool_use_id": call.id,
        }
        if self._hooks.wanted(PRE_TOOL_USE, name):
            refusal = await self._before(name, fields)
            if refusal is not None:
                return refusal
        result = await self._inner.execute(call)
        if not self._hooks.wanted(POST_TOOL_USE, name):
            return result
        answer = await self._hooks.run(POST_TOOL_USE, {**fields, "tool_response": result}, name)
        _halt_on(answer)
        notes = [f"[PostToolUse hook] {answer.reason}"] if answer.blocked and answer.reason else []
        if answer.added_context:
            notes.append(f"[PostToolUse hook context] {answer.added_context}")
        joined = "\n\n".join([result, *notes])
        return FailedResult(joined) if isinstance(result, FailedResult) else joined

    async def _before(self, name: str, fields: JSONObject) -> str | None:
        """None when the call may run, else the tool result saying why it did not."""
        answer = await self._hooks.run(PRE_TOOL_USE, fields, name)
        _halt_on(answer)
        if answer.blocked:
            reason = answer.reason or "no reason given"
            return FailedResult(f"Blocked by a PreToolUse hook; '{name}' did not run.\n{reason}")
        if not answer.ask:
            return None
        shown = json.dumps(fields["tool_input"], ensure_ascii=False)
        if len(shown) > _SHOWN_ARGUMENTS:
            shown = shown[: _SHOWN_ARGUMENTS - 3] + "..."
        why = f" ({answer.reason})" if answer.reason else ""
        summary = f"a hook asks you to confirm: call `{name}` with {shown}{why}"
        request = ApprovalRequest(kind="command", path="", diff="", summary=summary)
        decision = await self._approver.ask(request)
        if decision.decision == "yes":
            return None
        said = f" Reason: {decision.reason.strip()}" if decision.reason.strip() else ""
        return FailedResult(
            f"the user declined the call of '{name}' a hook put to them; it did not run.{said}"
        )


def _halt_on(answer: HookAnswer) -> None:
    if answer.halt is not None:
        raise HookHalt(answer.halt)


def _tool_input(arguments: str) -> Any:
    """The arguments object the model sent, or its raw text when it is not one."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return arguments
    return value if isinstance(value, dict) else arguments
