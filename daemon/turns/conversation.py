"""The conversation a general question is answered with: what was said, not what was done.

The general route has no tools, and some servers refuse tool calls and results
in a request that offers no tools, so it gets the session's history as plain
talk: the users' texts and the assistant's replies, tool calls and their results
left out, messages of one side in a row joined into one (chat templates want the
sides to alternate), starting with a user's message and ending with the
assistant's. The newest messages are kept, up to half the model's context
(`CHARS_PER_TOKEN` characters a token), so the question always fits.
"""

from __future__ import annotations

from coding_harness.daemon.agent.seams import JSONObject

CHARS_PER_TOKEN = 4
SHARE = 2  # the conversation takes at most 1/SHARE of the context


def conversation(history: list[JSONObject], context_tokens: int) -> list[JSONObject]:
    """The newest of `history` said in plain words, within the budget."""
    budget = context_tokens * CHARS_PER_TOKEN // SHARE
    said: list[JSONObject] = []
    for message in reversed(history):
        role, content = message.get("role"), message.get("content")
        if role not in ("user", "assistant") or not isinstance(content, str) or not content:
            continue
        if len(content) > budget:
            break
        budget -= len(content)
        if said and said[0]["role"] == role:
            said[0] = {"role": role, "content": f"{content}\n\n{said[0]['content']}"}
        else:
            said.insert(0, {"role": role, "content": content})
    while said and said[0]["role"] != "user":
        said.pop(0)
    while said and said[-1]["role"] != "assistant":
        said.pop()
    return said
