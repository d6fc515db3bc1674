"""The repo map of one session: what its next coding turn's system prompt carries.

`session_map` asks the hub for the workspace's index (a cold one is being built:
the answer says so and carries no map), finds what the conversation mentions
(its messages and tool calls, newest first, and the new request) and renders the
map within `agent.repo_map_tokens` (and an eighth of the model's context), with
the session's secrets redacted. The
turn, `session.map` (`/map`) and `session.context` (`/context`) all use it, so
what is shown is what is sent.
A refresh that takes longer than `REFRESH_WAIT` (a checkout of another branch)
is not waited for: the map comes from the index as it was.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coding_harness.daemon.agent.frames import PROMPT_TAGS, escape_tags
from coding_harness.daemon.agent.seams import JSONObject
from coding_harness.daemon.context.window import tokens
from coding_harness.daemon.index.code_index import CodeIndex
from coding_harness.daemon.index.hub import BUILDING, FAILED, IndexHub
from coding_harness.daemon.index.repo_map import mentions, repo_map

REFRESH_WAIT = 2.0  # seconds a turn waits for the index to catch up with the files
CONTEXT_SHARE = 8  # the map takes at most 1/8 of the model's context


def map_budget(repo_map_tokens: int, context_limit: int) -> int:
    """`agent.repo_map_tokens`, but never more than a small share of the context: a
    1,024-token map would fill a small local model's window."""
    return max(0, min(repo_map_tokens, context_limit // CONTEXT_SHARE))


_SECTION = "Repository map, from the code index:\n<repo-map>\n{map}</repo-map>"


@dataclass(kw_only=True, slots=True)
class SessionMap:
    state: str  # ready | building | off | failed
    map: str = ""
    budget: int = 0
    files: int = 0
    done: int = 0
    total: int = 0
    error: str | None = None
    notice: str | None = None  # the index is partial: over its memory budget

    @property
    def tokens(self) -> int:
        return tokens(len(self.map))

    def to_wire(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "map": self.map,
            "tokens": self.tokens,
            "budget": self.budget,
            "files": self.files,
            "done": self.done,
            "total": self.total,
            "error": self.error,
            "notice": self.notice,
        }


async def session_map(
    hub: IndexHub | None,
    root: Path,
    budget: int,
    conversation: Iterable[str],
    redact: Callable[[str], str] = str,
    since: float | None = None,
) -> SessionMap:
    """`redact`: hides the session's secrets (a constant's line may hold one); `since`:
    a refresh started then or later is recent enough (`IndexHub.current`)."""
    if hub is None or budget <= 0:
        return SessionMap(state="off", budget=budget)
    try:
        index = await asyncio.wait_for(hub.current(root, since), REFRESH_WAIT)
    except TimeoutError:
        index = hub.index_of(root)
    state = hub.entry_state(root) or {}
    answer = SessionMap(
        state=BUILDING,
        budget=budget,
        files=int(state.get("files", 0)),
        done=int(state.get("done", 0)),
        total=int(state.get("total", 0)),
        error=state.get("error"),
        notice=state.get("notice"),
    )
    failed = state.get("state") == FAILED
    if index is None:  # the first build runs (or just ended: the next call has the map)
        answer.state = FAILED if failed else BUILDING
        return answer
    if index.files:  # an empty workspace has no map: no thread to wait for
        answer.map = redact(await asyncio.to_thread(_render, index, budget, list(conversation)))
    answer.state = FAILED if failed else "ready"
    return answer


def _render(index: CodeIndex, budget: int, texts: list[str]) -> str:
    return repo_map(index, budget, mentions(index, texts))


def conversation_texts(history: list[JSONObject], request: str = "") -> list[str]:
    """The words of a conversation, newest first: the request, then each message's text
    and its tool calls' arguments."""
    texts = [request] if request else []
    for message in reversed(history):
        content = message.get("content")
        if isinstance(content, str) and content:
            texts.append(content)
        for call in message.get("tool_calls") or []:
            arguments = (
                call.get("function", {}).get("arguments") if isinstance(call, dict) else None
            )
            if isinstance(arguments, str):
                texts.append(arguments)
            elif arguments is not None:
                texts.append(json.dumps(arguments))
    return texts


def with_repo_map(prompt: str, text: str) -> str:
    """`prompt` followed by the map's section; `prompt` as it is without a map."""
    if not text:
        return prompt
    text = escape_tags(text, *PROMPT_TAGS)  # a source line cannot close it
    return prompt.rstrip("\n") + "\n\n" + _SECTION.format(map=text) + "\n"
