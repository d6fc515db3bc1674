"""Keeping a history the model will accept.

A chat-completions history is invalid when an assistant message's tool calls
lack their tool results, the state a cancelled or crashed turn leaves.
`repair_dangling` adds a result for each missing one. A turn stopped before the
model said anything leaves the user's request unanswered, and the next request
would follow it directly: two user messages in a row, which servers whose chat
template wants the roles to alternate refuse. `answer_trailing_request` closes
it with a short assistant message.
"""

from __future__ import annotations

from coding_harness.daemon.agent.seams import JSONObject


def tool_message(call_id: str, name: str, content: str) -> JSONObject:
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}


def repair_dangling(messages: list[JSONObject], note: str) -> int:
    """Answer every unanswered tool call with `note`; return how many were added."""
    answered = {m.get("tool_call_id") for m in messages if m.get("role") == "tool"}
    added = 0
    index = 0
    while index < len(messages):
        message = messages[index]
        index += 1
        if message.get("role") != "assistant":
            continue
        missing = [c for c in message.get("tool_calls") or [] if c.get("id") not in answered]
        # Results belong right after their assistant message (and its other results).
        insert_at = index
        while insert_at < len(messages) and messages[insert_at].get("role") == "tool":
            insert_at += 1
        for call in missing:
            name = str((call.get("function") or {}).get("name", ""))
            messages.insert(insert_at, tool_message(str(call.get("id")), name, note))
            answered.add(call.get("id"))
            insert_at += 1
            added += 1
    return added


def answer_trailing_request(messages: list[JSONObject], note: str) -> bool:
    """Close a history that ends with the user's request with `note` as the answer."""
    if not messages or messages[-1].get("role") != "user":
        return False
    messages.append({"role": "assistant", "content": note})
    return True


_ROLES = frozenset({"user", "assistant", "tool"})


def check_messages(messages: object) -> list[JSONObject]:
    """A history loaded from a file, checked; ValueError names the first problem."""
    if not isinstance(messages, list):
        raise ValueError("expected a JSON array of messages")
    calls: set[str] = set()
    for index, message in enumerate(messages):
        where = f"message {index}"
        if not isinstance(message, dict) or message.get("role") not in _ROLES:
            raise ValueError(f"{where}: needs a role of user, assistant or tool")
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            raise ValueError(f"{where}: content must be text or null")
        for call in message.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict) or not isinstance(call.get("id"), str):
                raise ValueError(f"{where}: each tool call needs an id and a function")
            calls.add(call["id"])
        if message["role"] == "tool" and message.get("tool_call_id") not in calls:
            raise ValueError(f"{where}: a tool result must answer an earlier tool call")
    # `content` as a string on every message: some servers reject null (providers/wire.py).
    checked = [{**m, "content": m.get("content") or ""} for m in messages]
    repair_dangling(checked, "not run: the history was loaded from a file")
    return checked
