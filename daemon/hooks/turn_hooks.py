"""The hooks of a whole turn: UserPromptSubmit before it, Stop when the model is done.

`prompt_context` runs the UserPromptSubmit hooks with the request's `prompt`:
a block (exit 2, `"decision": "block"`) or `"continue": false` refuses the
task (`HookHalt`: the turn ends with exit code 1 and an `error` event carrying
the hook's reason, and the prompt is not kept); what they print on success, or
their `additionalContext`, is returned to be added to the prompt. `until_stopped`
runs the tool loop, then the Stop hooks with `stop_hook_active` and the reply
(`last_assistant_message`): a block asks the agent to go on, the reason as a new
user message, at most `MAX_CONTINUES` times per turn, so two hooks that disagree
cannot keep a turn running for ever.
"""

from __future__ import annotations

from typing import Protocol

from coding_harness.daemon.agent.loop import LoopResult
from coding_harness.daemon.agent.seams import EventSink, JSONObject
from coding_harness.daemon.config.hook_settings import STOP, USER_PROMPT_SUBMIT, HookSettings
from coding_harness.daemon.hooks.answers import HookHalt
from coding_harness.daemon.hooks.runner import DebugLine, HookRunner
from coding_harness.daemon.sessions.debug_log import DEBUG_SWITCHES
from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.shell.process import tool_environment
from coding_harness.protocol.methods import EventKind

MAX_CONTINUES = 3
CONTINUE_NOTE = "A Stop hook asks you to continue before you finish:"


class ToolLoop(Protocol):
    async def run(self, messages: list[JSONObject]) -> LoopResult: ...


def turn_hooks(
    settings: HookSettings,
    session: str,
    context: ToolContext,
    events: EventSink,
    debug: DebugLine | None = None,
) -> HookRunner:
    """The turn's hook runner: commands run in the workspace with the tool environment,
    without any secret the session knows of; runs go to the session's `--debug` log
    while it is on (unless `debug` is given)."""
    secrets = context.secrets
    return HookRunner(
        settings=settings,
        session=session,
        cwd=context.workspace.root,
        env=tool_environment(drop=secrets.names, passed=context.env_pass),
        events=events,
        redact=secrets.redact,
        debug=debug or DEBUG_SWITCHES.recorder(session, secrets, None),
    )


async def prompt_context(hooks: HookRunner, prompt: str) -> str:
    """What the UserPromptSubmit hooks add for the model; raises `HookHalt` on a refusal."""
    if not hooks.wanted(USER_PROMPT_SUBMIT):
        return ""
    answer = await hooks.run(USER_PROMPT_SUBMIT, {"prompt": prompt})
    if answer.halt is not None:
        raise HookHalt(answer.halt, prompt_refused=True)
    if answer.blocked:
        reason = answer.reason or "a UserPromptSubmit hook refused it"
        raise HookHalt(f"the task was refused: {reason}", prompt_refused=True)
    return answer.added_context


async def until_stopped(loop: ToolLoop, working: list[JSONObject], hooks: HookRunner) -> LoopResult:
    """The tool loop's result once no Stop hook asks it to go on."""
    result = await loop.run(working)
    for continued in range(MAX_CONTINUES + 1):
        if result.stopped is not None or not hooks.wanted(STOP):
            return result
        fields = {"stop_hook_active": continued > 0, "last_assistant_message": result.reply}
        answer = await hooks.run(STOP, fields)
        if answer.halt is not None:
            raise HookHalt(answer.halt)
        if not answer.blocked:
            return result
        if continued == MAX_CONTINUES:
            message = f"a Stop hook asked to continue again; the turn ended after {continued} more"
            hooks.events.emit(EventKind.NOTICE, {"message": message})
            return result
        reason = answer.reason or "the task is not finished"
        working.append({"role": "user", "content": f"{CONTINUE_NOTE}\n{reason}"})
        result = await loop.run(working)
    return result
