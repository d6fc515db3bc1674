"""The daemon's events and stored history as ACP `session/update` payloads.

`SessionView` holds what the translation of one session needs to remember: its
workspace (ACP wants absolute paths), the turns this bridge submitted itself
(their prompt is already on the editor's screen), the tool call an edit or an
approval belongs to, the text a turn streamed, and the context window's size.
Each update is built from the ACP SDK's schema models, so what goes to the
editor is what the schema allows. Approvals are not translated here: they are a
request to the editor (`approvals.py`), not an update.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from acp import helpers, schema

from coding_harness.client.acp.diff_texts import diff_texts
from coding_harness.protocol import exit_codes
from coding_harness.protocol.events import Event
from coding_harness.protocol.methods import EventKind

Update = (
    schema.UserMessageChunk
    | schema.AgentMessageChunk
    | schema.AgentThoughtChunk
    | schema.ToolCallStart
    | schema.ToolCallProgress
    | schema.AgentPlanUpdate
    | schema.AvailableCommandsUpdate
    | schema.CurrentModeUpdate
    | schema.ConfigOptionUpdate
    | schema.UsageUpdate
)

TOOL_KINDS: dict[str, schema.ToolKind] = {
    "read_file": "read",
    "list_dir": "read",
    "grep": "search",
    "find_symbol": "search",
    "run_shell": "execute",
    "propose_edit": "edit",
    "replace_text": "edit",
    "write_file": "edit",
    "fetch_url": "fetch",
    "web_search": "fetch",
    "commit_plan": "think",
}
EDIT_TOOLS = frozenset(name for name, kind in TOOL_KINDS.items() if kind == "edit")
# Why a loop stopped short (turn.finished's `stopped`) as an ACP stop reason.
STOP_REASONS: dict[str, schema.StopReason] = {
    "iteration_cap": "max_turn_requests",
    "budget": "max_tokens",
    "repetition": "refusal",
    "no_progress": "refusal",
    "spend_limit": "refusal",
}
RESULT_PREVIEW = 4000


def stop_reason(finished: dict[str, Any]) -> schema.StopReason:
    """The ACP stop reason of a `turn.finished` event's data."""
    if finished.get("exit_code") == exit_codes.INTERRUPTED:
        return "cancelled"
    stopped = finished.get("stopped")
    return STOP_REASONS.get(stopped, "end_turn") if isinstance(stopped, str) else "end_turn"


def tool_title(name: str, arguments: dict[str, Any]) -> str:
    """`read_file src/app.py`, `run_shell make check`: the call as a person reads it."""
    detail = next(
        (
            str(arguments[key])
            for key in ("path", "command", "pattern", "url", "query", "name")
            if isinstance(arguments.get(key), str)
        ),
        "",
    )
    return f"{name} {detail}".strip()[:200]


def parse_arguments(raw: object) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:  # cut at 4,000 characters, or broken by the model
        return {}
    return parsed if isinstance(parsed, dict) else {}


class SessionView:
    """One session as the editor sees it."""

    def __init__(self, session_id: str, cwd: str, context_size: int = 0) -> None:
        self.id = session_id
        self.cwd = Path(cwd)
        self.context_size = context_size
        self.own_turns: set[str] = set()
        self.own_texts: set[str] = set()  # submitted by this bridge, turn id not known yet
        self.last_seq = 0
        self._streamed: dict[str, str] = {}  # turn -> text streamed so far
        self._turn = ""
        self._open_edit: str | None = None  # the edit call a `diff` belongs to
        self.last_call: str | None = None  # the call an approval belongs to
        self.failed_calls: set[str] = set()  # refused by an answer: failed, result or not
        self._open_calls: set[str] = set()  # started, no result yet
        self.model_choice: tuple[str, str] | None = None  # (profile, model) the editor shows
        self.chosen: str | None = None  # a profile this editor just chose: not announced back

    def runs_own_turn(self) -> bool:
        """Whether the turn running now (as the events tell) is one this bridge submitted."""
        return bool(self._turn) and self._turn in self.own_turns

    def absolute(self, path: str) -> str:
        return str(self.cwd / path) if path else str(self.cwd)

    def updates(self, event: Event) -> list[Update]:
        """The updates one daemon event becomes (none for kinds the editor has no use for)."""
        self.last_seq = max(self.last_seq, event.seq)
        data = event.data
        kind = event.kind
        if kind == EventKind.TURN_STARTED:
            return self._started(event.text("turn"), str(data.get("text", "")))
        if kind == EventKind.TEXT_DELTA:
            text = str(data.get("text", ""))
            self._streamed[self._turn] = self._streamed.get(self._turn, "") + text
            return [helpers.update_agent_message_text(text)]
        if kind == EventKind.REASONING_DELTA:
            return [helpers.update_agent_thought_text(str(data.get("text", "")))]
        if kind == EventKind.TOOL_CALL:
            return [self._call(str(data.get("id")), str(data.get("name")), data.get("arguments"))]
        if kind == EventKind.TOOL_RESULT:
            flag = data.get("failed")
            failed = flag if isinstance(flag, bool) else None
            return [self._result(str(data.get("id")), str(data.get("result", "")), failed)]
        if kind == EventKind.DIFF:
            return self._diff(data)
        if kind == EventKind.CHECK_RESULT:
            return self._check(event.seq, data)
        if kind == EventKind.PLAN:
            return self._plan(data)
        if kind == EventKind.USAGE:
            return self._usage(data)
        if kind == EventKind.NOTICE:
            return [helpers.update_agent_thought_text(f"\n[{data.get('message', '')}]\n")]
        if kind == EventKind.UNDO:
            restored = ", ".join(str(p) for p in data.get("restored") or []) or "nothing"
            said = f"\n[undo of turn {data.get('turn')}: put back {restored}]\n"
            return [helpers.update_agent_thought_text(said)]
        if kind == EventKind.TURN_FINISHED:
            return self._finished(event.text("turn"), data)
        return []

    # -- turns -----------------------------------------------------------
    def _started(self, turn: str, text: str) -> list[Update]:
        self._turn = turn
        self._streamed[turn] = ""
        if turn in self.own_turns or text in self.own_texts:
            self.own_turns.add(turn)
            return []
        return [helpers.update_user_message_text(text)]

    def _finished(self, turn: str, data: dict[str, Any]) -> list[Update]:
        """The reply, when the turn ended without streaming it (a guard's message, an
        error): it is the last thing the agent says."""
        streamed = self._streamed.pop(turn, "")
        self._open_edit = self.last_call = None
        if turn == self._turn:
            self._turn = ""
        cut: list[Update] = [  # calls a cancel or a failure left without a result
            helpers.update_tool_call(call, status="failed") for call in sorted(self._open_calls)
        ]
        self._open_calls.clear()
        self.failed_calls.clear()
        reply = str(data.get("reply", ""))
        if data.get("exit_code") == exit_codes.INTERRUPTED or not reply.strip():
            return cut
        if reply.strip() in streamed:
            return cut
        lead = "\n\n" if streamed else ""
        return [*cut, helpers.update_agent_message_text(lead + reply)]

    # -- tools -----------------------------------------------------------
    def _call(self, call_id: str, name: str, raw: object) -> Update:
        arguments = parse_arguments(raw)
        path = arguments.get("path")
        locations = (
            [schema.ToolCallLocation(path=self.absolute(path))] if isinstance(path, str) else None
        )
        self.last_call = call_id
        self._open_calls.add(call_id)
        self._open_edit = call_id if name in EDIT_TOOLS else None
        return helpers.start_tool_call(
            call_id,
            tool_title(name, arguments),
            kind=TOOL_KINDS.get(name, "other"),
            status="in_progress",
            locations=locations,
            raw_input=arguments or raw,
        )

    def _result(self, call_id: str, result: str, flagged: bool | None = None) -> Update:
        """`flagged`: the daemon's `failed` flag; None (an older daemon, a stored
        history) falls back to the wording."""
        self._open_calls.discard(call_id)
        by_text = result.startswith("Error:") if flagged is None else flagged
        failed = call_id in self.failed_calls or by_text
        return helpers.update_tool_call(
            call_id,
            status="failed" if failed else "completed",
            content=[helpers.tool_content(helpers.text_block(result[:RESULT_PREVIEW]))],
        )

    def diff_content(self, path: str, diff: str) -> schema.FileEditToolCallContent:
        old, new = diff_texts(diff)
        return helpers.tool_diff_content(self.absolute(path), new, old)

    def _diff(self, data: dict[str, Any]) -> list[Update]:
        call = self._open_edit
        if call is None:
            return []
        content = self.diff_content(str(data.get("path", "")), str(data.get("diff", "")))
        return [helpers.update_tool_call(call, content=[content])]

    def _check(self, seq: int, data: dict[str, Any]) -> list[Update]:
        passed = bool(data.get("passed"))
        output = str(data.get("output", ""))[-RESULT_PREVIEW:]
        start = helpers.start_tool_call(
            f"check-{seq}",
            str(data.get("command") or "make check"),
            kind="execute",
            status="completed" if passed else "failed",
            content=[helpers.tool_content(helpers.text_block(output or "(no output)"))],
            locations=[schema.ToolCallLocation(path=str(self.cwd))],
        )
        return [start]

    # -- plan and usage --------------------------------------------------
    def _plan(self, data: dict[str, Any]) -> list[Update]:
        steps = data.get("steps")
        if not isinstance(steps, list):
            return []
        entries = [
            helpers.plan_entry(
                str(step.get("text", "")),
                status="completed" if step.get("done") else "pending",
            )
            for step in steps
            if isinstance(step, dict)
        ]
        return [helpers.update_plan(entries)]

    def _usage(self, data: dict[str, Any]) -> list[Update]:
        if data.get("notes"):  # the turn-close notes call is not the conversation
            return []
        used = _count(data.get("prompt_tokens")) + _count(data.get("completion_tokens"))
        cost = data.get("session_cost_usd")
        return [
            schema.UsageUpdate(
                session_update="usage_update",
                used=used,
                size=max(self.context_size, used),
                cost=schema.Cost(amount=float(cost), currency="USD")
                if isinstance(cost, (int, float))
                else None,
            )
        ]

    # -- stored history --------------------------------------------------
    def replay(self, messages: list[dict[str, Any]]) -> Iterator[Update]:
        """The stored conversation (chat-completions messages) as updates, in order."""
        for message in messages:
            role = message.get("role")
            content = message.get("content")
            text = content if isinstance(content, str) else ""
            if role == "user" and text:
                yield helpers.update_user_message_text(text)
            elif role == "assistant":
                if text:
                    yield helpers.update_agent_message_text(text)
                for call in message.get("tool_calls") or []:
                    function = call.get("function") or {}
                    call_id, name = str(call.get("id")), str(function.get("name"))
                    yield self._call(call_id, name, function.get("arguments"))
            elif role == "tool":
                yield self._result(str(message.get("tool_call_id")), text)
        self._open_edit = self.last_call = None


def _count(value: object) -> int:
    return value if isinstance(value, int) and value > 0 else 0
