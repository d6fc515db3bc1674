"""Measuring a conversation, and the resume brief that replaces it when compacted.

Token counts are estimates: characters divided by four, the usual rule of
thumb for English and code; no tokenizer is loaded. The brief carries what
re-reading the workspace cannot give back: the goal (the conversation's first
request), the latest request, the plan with each step's status, the files
edits actually changed (taken from tool results, never guessed), what is left,
and the model's own summary.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from coding_harness.daemon.agent.seams import JSONObject

PREVIEW_CHARS = 80
RESULT_CHARS = 2_000
BRIEF_MARK = "[Context compacted]"
_GOAL_HEAD = "Goal (the first request of this conversation):"
_FILES_HEAD = "Files changed so far (by applied edits):"
_EDIT_TOOLS = frozenset({"propose_edit", "replace_text", "write_file"})
_SECTION = re.compile(r"\n\n(?=[A-Z][^\n]*:\n)")


def message_chars(message: JSONObject) -> int:
    """Characters the model reads for one message: its text and any tool calls."""
    size = len(message.get("content") or "")
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        size += len(str(function.get("name", ""))) + len(str(function.get("arguments", "")))
    return size


def tokens(chars: int) -> int:
    """The estimate: four characters to a token, rounded up."""
    return (chars + 3) // 4


def preview(message: JSONObject) -> str:
    """One line for the context table: the text, or the calls it makes."""
    text = str(message.get("content") or "")
    calls = [_call_text(c.get("function") or {}) for c in message.get("tool_calls") or []]
    line = " ".join([text, *(f"-> {c}" for c in calls)]).strip()
    line = " ".join(line.split())
    return line if len(line) <= PREVIEW_CHARS else line[: PREVIEW_CHARS - 3] + "..."


def _call_text(function: JSONObject) -> str:
    return f"{function.get('name', '?')}({function.get('arguments', '')})"


def context_table(history: list[JSONObject], *, system_chars: int, limit: int) -> dict[str, Any]:
    """`session.context`'s answer: one row per history message, and the totals."""
    sizes = [message_chars(message) for message in history]
    rows = [
        {
            "index": index,
            "role": str(message.get("role", "?")),
            "chars": size,
            "tokens": tokens(size),
            "preview": preview(message),
        }
        for index, (message, size) in enumerate(zip(history, sizes, strict=True))
    ]
    total = sum(sizes) + system_chars
    return {
        "messages": rows,
        "system_tokens": tokens(system_chars),
        "total_chars": total,
        "total_tokens": tokens(total),
        "context_limit": limit,
        "estimate": "tokens are estimated as characters / 4",
    }


# -- what the conversation shows -----------------------------------------------


def goal_of(conversation: list[JSONObject]) -> str:
    """The first request: the first user message, or the goal an earlier brief kept."""
    first = next((m for m in conversation if m.get("role") == "user"), None)
    text = str(first.get("content") or "") if first else ""
    if text.startswith(BRIEF_MARK):
        return _section(text, _GOAL_HEAD) or text
    return text


def latest_request(conversation: list[JSONObject]) -> str:
    last = next((m for m in reversed(conversation) if m.get("role") == "user"), None)
    text = str(last.get("content") or "") if last else ""
    return "" if text.startswith(BRIEF_MARK) else text


def files_changed(conversation: list[JSONObject]) -> list[str]:
    """Paths that edits were applied to, from the tool calls and their results."""
    paths: list[str] = []
    for message in conversation:
        if message.get("role") == "user" and str(message.get("content", "")).startswith(BRIEF_MARK):
            kept = _section(str(message["content"]), _FILES_HEAD)
            paths += [line[2:] for line in kept.splitlines() if line.startswith("- ")]
    results = {
        m.get("tool_call_id"): str(m.get("content") or "")
        for m in conversation
        if m.get("role") == "tool"
    }
    for message in conversation:
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            if function.get("name") in _EDIT_TOOLS and results.get(call.get("id"), "").startswith(
                "applied"
            ):
                path = _argument(function.get("arguments"), "path")
                if path:
                    paths.append(path)
    return list(dict.fromkeys(paths))


def _argument(raw: Any, name: str) -> str:
    try:
        value = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return ""
    return str(value.get(name) or "") if isinstance(value, dict) else ""


def _section(text: str, head: str) -> str:
    start = text.find(head + "\n")
    if start < 0:
        return ""
    rest = text[start + len(head) + 1 :]
    end = _SECTION.search(rest)
    return (rest[: end.start()] if end else rest).strip()


# -- the brief -------------------------------------------------------------------


def resume_brief(
    *,
    goal: str,
    latest: str,
    plan: Iterable[str],
    files: Iterable[str],
    left: Iterable[str],
    summary: str | None,
) -> str:
    """The message that stands in for the dropped conversation."""
    plan_text = "\n".join(plan) or "No plan was committed."
    files_text = "\n".join(f"- {f}" for f in files) or "None recorded."
    left_text = "\n".join(f"- {step}" for step in left) or "See 'Left' in the summary below."
    parts = [
        f"{BRIEF_MARK} The earlier conversation was replaced by this brief to save "
        "context. The files on disk are current: read them again before editing.",
        f"{_GOAL_HEAD}\n{goal.strip() or '(not recorded)'}",
    ]
    if latest.strip() and latest.strip() != goal.strip():
        parts.append(f"Latest request:\n{latest.strip()}")
    parts += [
        f"Plan:\n{plan_text}",
        f"{_FILES_HEAD}\n{files_text}",
        f"Left to do (plan steps not done):\n{left_text}",
        "Summary of the work so far:\n"
        + (summary.strip() if summary else "(no summary: the model could not be asked)"),
    ]
    return "\n\n".join(parts)


def transcript(conversation: list[JSONObject], cap_chars: int) -> str:
    """The conversation as plain text for the summariser, long results shortened.

    When it is still over `cap_chars`, the first request and the latest
    messages are kept and the middle is left out, with a note saying so.
    """
    lines = [_line(m) for m in conversation]
    if sum(len(line) for line in lines) <= cap_chars or len(lines) < 3:
        return "\n\n".join(lines)[:cap_chars]
    head, tail, used = lines[0], [], len(lines[0])
    for line in reversed(lines[1:]):
        if used + len(line) > cap_chars:
            break
        tail.append(line)
        used += len(line)
    dropped = len(lines) - 1 - len(tail)
    return "\n\n".join([head, f"[... {dropped} messages left out ...]", *reversed(tail)])


def _line(message: JSONObject) -> str:
    role = message.get("role")
    text = _shorten(str(message.get("content") or ""))
    if role == "tool":
        return f"RESULT of {message.get('name', 'tool')}: {text}"
    calls = [
        f"CALL {(c.get('function') or {}).get('name')}"
        f"({_shorten(str((c.get('function') or {}).get('arguments', '')))})"
        for c in message.get("tool_calls") or []
    ]
    return "\n".join([f"{str(role).upper()}: {text}" if text else str(role).upper(), *calls])


def _shorten(text: str) -> str:
    if len(text) <= RESULT_CHARS:
        return text
    half = RESULT_CHARS // 2
    return (
        f"{text[:half]}\n[... {len(text) - RESULT_CHARS} characters left out ...]\n{text[-half:]}"
    )
